import Foundation
import TransportCore

/// The answer to a ``ControlRequest``.
struct ControlResponse: Codable, Sendable {
    struct Member: Codable, Sendable, Equatable {
        var transport: String
        var address: String?
        var direction: String
        /// For a room member: the nick it joins with (the account's localpart if nil).
        var room: Bool? = nil
        var nick: String? = nil
    }

    struct ChannelEntry: Codable, Sendable, Equatable {
        var name: String
        var members: [Member]
    }

    /// One contact for `xmpp-bridge roster`.
    struct RosterEntry: Codable, Sendable, Equatable {
        var jid: String
        var name: String?
        var groups: [String]
        var subscription: String
        var pending: Bool
        var availability: String
        var status: String?
        /// Created by a roster mirror (which may change or remove it).
        var mirrored: Bool
    }

    /// One transport for `xmpp-bridge status`.
    struct TransportStatus: Codable, Sendable, Equatable {
        var name: String
        var kind: String
        var connected: Bool
        var queued: Int
        var lastError: String?
        /// Seconds the oldest queued delivery has waited.
        var oldestAgeSeconds: Double? = nil
        /// Deliveries in the dead letters.
        var dead: Int = 0
        /// Gave up after an error another try cannot fix; SIGHUP or `reconnect` tries again.
        var stopped: Bool = false
        /// An account's rooms.
        var rooms: [RoomEntry]? = nil
        /// A gateway's users and their linked accounts.
        var gatewayUsers: [GatewayUserEntry]? = nil
        /// With several instances: the one whose lease on it runs (nil: none now, or not leased).
        var owner: String? = nil
    }

    /// One instance sharing the state, for `xmpp-bridge status` (issue 26).
    struct InstanceStatus: Codable, Sendable, Equatable {
        var name: String
        /// Its last heartbeat, ISO 8601 UTC.
        var heartbeat: String
        /// Heard from within `lease_ttl`.
        var alive: Bool
        /// The instance that answered.
        var this: Bool
    }

    /// One room for `xmpp-bridge rooms` and `status` (XEP-0045).
    struct RoomEntry: Codable, Sendable, Equatable {
        var account: String
        var room: String
        var nick: String
        /// offline, joining, joined, waiting (out for now, rejoining) or stopped.
        var state: String
        /// Why the room is out (waiting or stopped).
        var reason: String?
        var occupants: Int
    }

    /// One queued or dead delivery for `xmpp-bridge queue list`.
    struct QueueEntry: Codable, Sendable, Equatable {
        var sequence: Int64
        /// "queued" or "dead".
        var state: String
        var transport: String
        var target: String
        var channel: String
        var attempts: Int
        var enqueuedAt: Date
        /// The last error of a queued delivery, the reason of a dead one.
        var reason: String?
        var body: String
    }

    /// One gateway user for `xmpp-bridge gateway users`.
    struct GatewayUserEntry: Codable, Sendable, Equatable {
        var gateway: String
        var user: String
        /// The linked account's name, and its address.
        var account: String
        var address: String
        /// Linked in `bridge.toml` (else registered in band).
        var configured: Bool
    }

    var ok: Bool
    var error: String? = nil
    var channels: [ChannelEntry]? = nil
    var roster: [RosterEntry]? = nil
    var transports: [TransportStatus]? = nil
    /// With several instances (issue 26): every instance that ever sent a heartbeat.
    var instances: [InstanceStatus]? = nil
    var queue: [QueueEntry]? = nil
    var rooms: [RoomEntry]? = nil
    /// How many deliveries a queue request acted on.
    var count: Int? = nil
    /// `history`: the archived messages, newest first (best first for a search).
    var history: [ArchivedMessage]? = nil
    var gatewayUsers: [GatewayUserEntry]? = nil
}

extension ControlResponse.QueueEntry {
    init(_ item: QueueItemSummary) {
        self.init(
            sequence: item.delivery.sequence, state: item.state.rawValue, transport: item.delivery.target.transport,
            target: item.delivery.target.description, channel: item.delivery.channel, attempts: item.attempts,
            enqueuedAt: item.enqueuedAt, reason: item.reason, body: item.delivery.body
        )
    }
}
