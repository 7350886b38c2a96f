import Foundation
import GRDB
import TransportCore

/// A row of `queue`, the durable outbound queue: every field of a `Delivery`, endpoints as
/// two columns each, keyed by an autoincremented `sequence` that orders the queue.
///
/// `MutablePersistableRecord` rather than `PersistableRecord`, so that inserting it reads
/// back the sequence SQLite assigned.
package struct QueuedDeliveryRecord: Codable, Hashable, Sendable, FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "queue"

    /// Nil until inserted.
    package var sequence: Int64?
    package var channel: String
    package var targetTransport: String
    package var targetAddress: String?
    package var body: String
    package var originalBody: String
    package var nick: String
    package var subject: String?
    package var type: RelayChannel.DeliveryType
    package var sourceTransport: String
    package var sourceAddress: String?
    package var sourceID: String
    package var relayID: String
    /// ``Delivery/content`` as JSON; nil for plain text (v8).
    package var content: String?
    package var enqueuedAt: Date
    /// Attempts so far that ended in an error (v3).
    package var attempts: Int
    package var lastError: String?

    package enum CodingKeys: String, CodingKey {
        case sequence
        case channel
        case targetTransport = "target_transport"
        case targetAddress = "target_address"
        case body
        case originalBody = "original_body"
        case nick
        case subject
        case type
        case sourceTransport = "source_transport"
        case sourceAddress = "source_address"
        case sourceID = "source_id"
        case relayID = "relay_id"
        case content
        case enqueuedAt = "enqueued_at"
        case attempts
        case lastError = "last_error"
    }

    /// Typed columns for the query interface.
    package enum Columns {
        package static let sequence = Column(CodingKeys.sequence)
        package static let targetTransport = Column(CodingKeys.targetTransport)
    }

    /// The stored delivery, with its queue sequence.
    package var delivery: Delivery {
        Delivery(
            sequence: self.sequence ?? 0,
            channel: self.channel,
            target: Endpoint(transport: self.targetTransport, address: self.targetAddress),
            body: self.body,
            originalBody: self.originalBody,
            nick: self.nick,
            subject: self.subject,
            type: self.type,
            source: Endpoint(transport: self.sourceTransport, address: self.sourceAddress),
            sourceID: self.sourceID,
            relayID: self.relayID,
            content: MessageContentColumn.decode(self.content)
        )
    }

    /// The row as a queue entry; nil for one not stored yet (no sequence).
    package var queued: (delivery: Delivery, enqueuedAt: Date, attempts: Int)? {
        self.sequence == nil ? nil : (self.delivery, self.enqueuedAt, self.attempts)
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        self.sequence = inserted.rowID
    }
}
