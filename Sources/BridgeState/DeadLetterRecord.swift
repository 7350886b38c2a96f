import Foundation
import GRDB
import TransportCore

/// A row of `dead_letters`: a delivery that will not be attempted again by itself, because
/// it used up `max_attempts` or met a permanent error (issue 8). `xmpp-bridge queue retry`
/// queues it anew; `queue drop` forgets it.
package struct DeadLetterRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "dead_letters"

    package var sequence: Int64
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
    package var attempts: Int
    package var reason: String
    package var deadAt: Date

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
        case reason
        case deadAt = "dead_at"
    }

    package enum Columns {
        package static let sequence = Column(CodingKeys.sequence)
        package static let targetTransport = Column(CodingKeys.targetTransport)
    }

    /// The delivery as it was queued, with its old sequence.
    package var delivery: Delivery {
        Delivery(
            sequence: self.sequence, channel: self.channel,
            target: Endpoint(transport: self.targetTransport, address: self.targetAddress),
            body: self.body, originalBody: self.originalBody, nick: self.nick, subject: self.subject, type: self.type,
            source: Endpoint(transport: self.sourceTransport, address: self.sourceAddress),
            sourceID: self.sourceID, relayID: self.relayID, content: MessageContentColumn.decode(self.content)
        )
    }
}
