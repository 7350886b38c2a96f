import Foundation
import GRDB
import TransportCore

/// A row of `relays`, the id map: a source stanza id and one id it was relayed as.
///
/// Used to recognise echoes of our own messages (no loops) and, later, to carry receipts
/// and corrections (XEP-0184, XEP-0308) from a relayed copy back to its source.
struct RelayRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "relays"

    /// The stanza id the relayed copy was sent with; unique (primary key).
    var relayID: String
    var channel: String
    var sourceTransport: String
    var sourceAddress: String?
    var sourceID: String
    var targetTransport: String
    var targetAddress: String?
    var createdAt: Date
    /// When the recipient's client sent a receipt (XEP-0184) or displayed marker (XEP-0333).
    var receivedAt: Date?
    var displayedAt: Date?
    /// The stanza-id the source room gave the message, and the one the target room gave
    /// this copy (XEP-0359; v8), for references in rooms.
    var sourceStanzaID: String?
    var copyStanzaID: String?
    /// The sender's display name (a room occupant's nick) (v8).
    var sourceNick: String?

    enum CodingKeys: String, CodingKey {
        case relayID = "relay_id"
        case channel
        case sourceTransport = "source_transport"
        case sourceAddress = "source_address"
        case sourceID = "source_id"
        case targetTransport = "target_transport"
        case targetAddress = "target_address"
        case createdAt = "created_at"
        case receivedAt = "received_at"
        case displayedAt = "displayed_at"
        case sourceStanzaID = "source_stanza_id"
        case copyStanzaID = "target_stanza_id"
        case sourceNick = "source_nick"
    }

    /// Typed columns for the query interface.
    enum Columns {
        static let relayID = Column(CodingKeys.relayID)
        static let sourceTransport = Column(CodingKeys.sourceTransport)
        static let sourceAddress = Column(CodingKeys.sourceAddress)
        static let sourceID = Column(CodingKeys.sourceID)
        static let createdAt = Column(CodingKeys.createdAt)
        static let sourceStanzaID = Column(CodingKeys.sourceStanzaID)
        static let copyStanzaID = Column(CodingKeys.copyStanzaID)
        static let targetTransport = Column(CodingKeys.targetTransport)
        static let targetAddress = Column(CodingKeys.targetAddress)
        static let sourceNick = Column(CodingKeys.sourceNick)
    }

    init(
        relayID: String, channel: String, source: Endpoint, sourceID: String, target: Endpoint, createdAt: Date
    ) {
        self.relayID = relayID
        self.channel = channel
        self.sourceTransport = source.transport
        self.sourceAddress = source.address
        self.sourceID = sourceID
        self.targetTransport = target.transport
        self.targetAddress = target.address
        self.createdAt = createdAt
    }

    /// The id map entry for a delivery.
    init(_ delivery: Delivery, createdAt: Date) {
        self.init(
            relayID: delivery.relayID, channel: delivery.channel, source: delivery.source,
            sourceID: delivery.sourceID, target: delivery.target, createdAt: createdAt
        )
    }

    var source: Endpoint { Endpoint(transport: self.sourceTransport, address: self.sourceAddress) }
    var target: Endpoint { Endpoint(transport: self.targetTransport, address: self.targetAddress) }
}
