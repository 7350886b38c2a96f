import Foundation
import LocalArchive
import TransportCore

/// One request on the control socket (JSON line) or from `xmpp-bridge route` offline:
/// list the routing table, or add or remove a channel member at run time.
package struct ControlRequest: Codable, Sendable {
    package enum Operation: String, Codable, Sendable {
        case list
        case add
        case remove
        /// An account's contacts (`transport` names the account); daemon only.
        case roster
        /// Every transport's state, queue depth and last error.
        case status
        /// Queued and dead deliveries (`transport` filters).
        case queueList = "queue-list"
        /// Dead letters queued anew, or queued deliveries tried now (`sequences`; none: every dead letter).
        case queueRetry = "queue-retry"
        /// Queued or dead deliveries forgotten (`sequences`; none: every dead letter).
        case queueDrop = "queue-drop"
        /// A fresh connection for the account or local transport `transport`; daemon only.
        case reconnect
        /// Each account's rooms (XEP-0045) and their state; daemon only.
        case rooms
        /// Gateway users (of `gateway`, else of every gateway).
        case gatewayUsers = "gateway-users"
        /// Forgets a registered gateway user (`address`), with `gateway` or with any.
        case gatewayRemove = "gateway-remove"
        /// The local archive (`channel`, `since`, `until`, `search`, `address` as the
        /// sender, `limit`; issue 25).
        case history
        /// An OMEMO account's device and its contacts' devices (`transport`; issue 41).
        case omemoFingerprints = "omemo-fingerprints"
        /// A contact's (`address`) key, by `fingerprint`, verified or distrusted by hand.
        case omemoTrust = "omemo-trust"
        case omemoDistrust = "omemo-distrust"
    }

    package var op: Operation
    package var channel: String? = nil
    /// An account or local transport name.
    package var transport: String? = nil
    /// A contact's JID, for account members.
    package var address: String? = nil
    package var direction: String? = nil
    /// `add`: the address is a room (XEP-0045) to join, with this nick (nil: the account's localpart).
    package var room: Bool? = nil
    package var nick: String? = nil
    /// Queue sequences, for the queue operations.
    package var sequences: [Int64]? = nil
    /// A gateway's name (`[gateway.NAME]`), for the gateway operations.
    package var gateway: String? = nil
    /// `history`: the time range, the words searched (best first), the most messages.
    package var since: Date? = nil
    package var until: Date? = nil
    package var search: String? = nil
    package var limit: Int? = nil
    /// `omemo-trust`, `omemo-distrust`: the key as its fingerprint.
    package var fingerprint: String? = nil

    /// The archive query a `history` request makes: a search ranks, best first.
    package var archiveQuery: ArchiveQuery {
        var query = ArchiveQuery(channel: self.channel, since: self.since, until: self.until, search: self.search, from: self.address, limit: self.limit ?? 100)
        query.ranked = self.search != nil
        return query
    }

    package init(op: Operation, channel: String? = nil, transport: String? = nil, address: String? = nil, direction: String? = nil, room: Bool? = nil, nick: String? = nil, sequences: [Int64]? = nil, gateway: String? = nil, since: Date? = nil, until: Date? = nil, search: String? = nil, limit: Int? = nil) {
        self.op = op
        self.channel = channel
        self.transport = transport
        self.address = address
        self.direction = direction
        self.room = room
        self.nick = nick
        self.sequences = sequences
        self.gateway = gateway
        self.since = since
        self.until = until
        self.search = search
        self.limit = limit
    }
}
