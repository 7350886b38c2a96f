import Foundation
import TransportCore

/// One request on the control socket (JSON line) or from `xmpp-bridge route` offline:
/// list the routing table, or add or remove a channel member at run time.
struct ControlRequest: Codable, Sendable {
    enum Operation: String, Codable, Sendable {
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
    }

    var op: Operation
    var channel: String? = nil
    /// An account or local transport name.
    var transport: String? = nil
    /// A contact's JID, for account members.
    var address: String? = nil
    var direction: String? = nil
    /// `add`: the address is a room (XEP-0045) to join, with this nick (nil: the account's localpart).
    var room: Bool? = nil
    var nick: String? = nil
    /// Queue sequences, for the queue operations.
    var sequences: [Int64]? = nil
    /// A gateway's name (`[gateway.NAME]`), for the gateway operations.
    var gateway: String? = nil
    /// `history`: the time range, the words searched (best first), the most messages.
    var since: Date? = nil
    var until: Date? = nil
    var search: String? = nil
    var limit: Int? = nil

    /// The archive query a `history` request makes: a search ranks, best first.
    var archiveQuery: ArchiveQuery {
        var query = ArchiveQuery(channel: self.channel, since: self.since, until: self.until, search: self.search, from: self.address, limit: self.limit ?? 100)
        query.ranked = self.search != nil
        return query
    }
}
