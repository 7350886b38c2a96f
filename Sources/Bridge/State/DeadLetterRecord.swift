import Foundation
import GRDB
import TransportCore

/// A row of `dead_letters`: a delivery that will not be attempted again by itself, because
/// it used up `max_attempts` or met a permanent error (issue 8). `xmpp-bridge queue retry`
/// queues it anew; `queue drop` forgets it.
struct DeadLetterRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "dead_letters"

    var sequence: Int64
    var channel: String
    var targetTransport: String
    var targetAddress: String?
    var body: String
    var originalBody: String
    var nick: String
    var subject: String?
    var type: RelayChannel.DeliveryType
    var sourceTransport: String
    var sourceAddress: String?
    var sourceID: String
    var relayID: String
    /// ``Delivery/content`` as JSON; nil for plain text (v8).
    var content: String?
    var enqueuedAt: Date
    var attempts: Int
    var reason: String
    var deadAt: Date

    enum CodingKeys: String, CodingKey {
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

    enum Columns {
        static let sequence = Column(CodingKeys.sequence)
        static let targetTransport = Column(CodingKeys.targetTransport)
    }

    init(_ delivery: Delivery, enqueuedAt: Date, attempts: Int, reason: String, deadAt: Date) {
        self.sequence = delivery.sequence
        self.channel = delivery.channel
        self.targetTransport = delivery.target.transport
        self.targetAddress = delivery.target.address
        self.body = delivery.body
        self.originalBody = delivery.originalBody
        self.nick = delivery.nick
        self.subject = delivery.subject
        self.type = delivery.type
        self.sourceTransport = delivery.source.transport
        self.sourceAddress = delivery.source.address
        self.sourceID = delivery.sourceID
        self.relayID = delivery.relayID
        self.content = MessageContentColumn.encode(delivery.content)
        self.enqueuedAt = enqueuedAt
        self.attempts = attempts
        self.reason = reason
        self.deadAt = deadAt
    }

    /// The delivery as it was queued, with its old sequence.
    var delivery: Delivery {
        Delivery(
            sequence: self.sequence, channel: self.channel,
            target: Endpoint(transport: self.targetTransport, address: self.targetAddress),
            body: self.body, originalBody: self.originalBody, nick: self.nick, subject: self.subject, type: self.type,
            source: Endpoint(transport: self.sourceTransport, address: self.sourceAddress),
            sourceID: self.sourceID, relayID: self.relayID, content: MessageContentColumn.decode(self.content)
        )
    }
}
