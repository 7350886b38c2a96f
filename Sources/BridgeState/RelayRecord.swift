import Foundation
import GRDB
import StanzaIdentity
import TransportCore

/// A row of `relays`, the id map: a source stanza id and one id it was relayed as.
///
/// Used to recognise echoes of our own messages (no loops) and, later, to carry receipts
/// and corrections (XEP-0184, XEP-0308) from a relayed copy back to its source.
package struct RelayRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "relays"

    /// The stanza id the relayed copy was sent with; unique (primary key).
    package var relayID: String
    package var channel: String
    package var sourceTransport: String
    package var sourceAddress: String?
    package var sourceID: String
    package var targetTransport: String
    package var targetAddress: String?
    package var createdAt: Date
    /// When the recipient's client sent a receipt (XEP-0184) or displayed marker (XEP-0333).
    package var receivedAt: Date?
    package var displayedAt: Date?
    /// The stanza-id the source room gave the message, and the one the target room gave
    /// this copy (XEP-0359; v8; the copy's column named `copy_stanza_id` since v16), for
    /// references in rooms.
    package var sourceStanzaID: StanzaID?
    package var copyStanzaID: StanzaID?
    /// The sender's display name (a room occupant's nick) (v8).
    package var sourceNick: String?

    package enum CodingKeys: String, CodingKey {
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
        case copyStanzaID = "copy_stanza_id"
        case sourceNick = "source_nick"
    }

    /// Typed columns for the query interface.
    package enum Columns {
        package static let relayID = Column(CodingKeys.relayID)
        package static let sourceTransport = Column(CodingKeys.sourceTransport)
        package static let sourceAddress = Column(CodingKeys.sourceAddress)
        package static let sourceID = Column(CodingKeys.sourceID)
        package static let createdAt = Column(CodingKeys.createdAt)
        package static let sourceStanzaID = Column(CodingKeys.sourceStanzaID)
        package static let copyStanzaID = Column(CodingKeys.copyStanzaID)
        package static let targetTransport = Column(CodingKeys.targetTransport)
        package static let targetAddress = Column(CodingKeys.targetAddress)
        package static let sourceNick = Column(CodingKeys.sourceNick)
    }

    package init(
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

    package var source: Endpoint { Endpoint(transport: self.sourceTransport, address: self.sourceAddress) }
    package var target: Endpoint { Endpoint(transport: self.targetTransport, address: self.targetAddress) }
}
