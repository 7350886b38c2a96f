import BridgeRelay
import Foundation
import LocalArchive
import TransportCore

/// The answer to a ``ControlRequest``.
package struct ControlResponse: Codable, Sendable {
    package struct Member: Codable, Sendable, Equatable {
        package var transport: String
        package var address: String?
        package var direction: String
        /// For a room member: the nick it joins with (the account's localpart if nil).
        package var room: Bool? = nil
        package var nick: String? = nil

        package init(transport: String, address: String? = nil, direction: String, room: Bool? = nil, nick: String? = nil) {
            self.transport = transport
            self.address = address
            self.direction = direction
            self.room = room
            self.nick = nick
        }
    }

    package struct ChannelEntry: Codable, Sendable, Equatable {
        package var name: String
        package var members: [Member]

        package init(name: String, members: [Member]) {
            self.name = name
            self.members = members
        }
    }

    /// One contact for `xmpp-bridge roster`.
    package struct RosterEntry: Codable, Sendable, Equatable {
        package var jid: String
        package var name: String?
        package var groups: [String]
        package var subscription: String
        package var pending: Bool
        package var availability: String
        package var status: String?
        /// Created by a roster mirror (which may change or remove it).
        package var mirrored: Bool

        package init(jid: String, name: String? = nil, groups: [String], subscription: String, pending: Bool, availability: String, status: String? = nil, mirrored: Bool) {
            self.jid = jid
            self.name = name
            self.groups = groups
            self.subscription = subscription
            self.pending = pending
            self.availability = availability
            self.status = status
            self.mirrored = mirrored
        }
    }

    /// One transport for `xmpp-bridge status`.
    package struct TransportStatus: Codable, Sendable, Equatable {
        package var name: String
        package var kind: String
        package var connected: Bool
        package var queued: Int
        package var lastError: String?
        /// Seconds the oldest queued delivery has waited.
        package var oldestAgeSeconds: Double? = nil
        /// Deliveries in the dead letters.
        package var dead: Int = 0
        /// Gave up after an error another try cannot fix; SIGHUP or `reconnect` tries again.
        package var stopped: Bool = false
        /// An account's rooms.
        package var rooms: [RoomEntry]? = nil
        /// A gateway's users and their linked accounts.
        package var gatewayUsers: [GatewayUserEntry]? = nil
        /// With several instances: the one whose lease on it runs (nil: none now, or not leased).
        package var owner: String? = nil

        package init(name: String, kind: String, connected: Bool, queued: Int, lastError: String? = nil, oldestAgeSeconds: Double? = nil, dead: Int = 0, stopped: Bool = false, rooms: [RoomEntry]? = nil, gatewayUsers: [GatewayUserEntry]? = nil, owner: String? = nil) {
            self.name = name
            self.kind = kind
            self.connected = connected
            self.queued = queued
            self.lastError = lastError
            self.oldestAgeSeconds = oldestAgeSeconds
            self.dead = dead
            self.stopped = stopped
            self.rooms = rooms
            self.gatewayUsers = gatewayUsers
            self.owner = owner
        }
    }

    /// One instance sharing the state, for `xmpp-bridge status` (issue 26).
    package struct InstanceStatus: Codable, Sendable, Equatable {
        package var name: String
        /// Its last heartbeat, ISO 8601 UTC.
        package var heartbeat: String
        /// Heard from within `lease_ttl`.
        package var alive: Bool
        /// The instance that answered.
        package var this: Bool

        package init(name: String, heartbeat: String, alive: Bool, this: Bool) {
            self.name = name
            self.heartbeat = heartbeat
            self.alive = alive
            self.this = this
        }
    }

    /// One room for `xmpp-bridge rooms` and `status` (XEP-0045).
    package struct RoomEntry: Codable, Sendable, Equatable {
        package var account: String
        package var room: String
        package var nick: String
        /// offline, joining, joined, waiting (out for now, rejoining) or stopped.
        package var state: String
        /// Why the room is out (waiting or stopped).
        package var reason: String?
        package var occupants: Int

        package init(account: String, room: String, nick: String, state: String, reason: String? = nil, occupants: Int) {
            self.account = account
            self.room = room
            self.nick = nick
            self.state = state
            self.reason = reason
            self.occupants = occupants
        }
    }

    /// One queued or dead delivery for `xmpp-bridge queue list`.
    package struct QueueEntry: Codable, Sendable, Equatable {
        package var sequence: Int64
        /// "queued" or "dead".
        package var state: String
        package var transport: String
        package var target: String
        package var channel: String
        package var attempts: Int
        package var enqueuedAt: Date
        /// The last error of a queued delivery, the reason of a dead one.
        package var reason: String?
        package var body: String

        package init(sequence: Int64, state: String, transport: String, target: String, channel: String, attempts: Int, enqueuedAt: Date, reason: String? = nil, body: String) {
            self.sequence = sequence
            self.state = state
            self.transport = transport
            self.target = target
            self.channel = channel
            self.attempts = attempts
            self.enqueuedAt = enqueuedAt
            self.reason = reason
            self.body = body
        }
    }

    /// One gateway user for `xmpp-bridge gateway users`.
    package struct GatewayUserEntry: Codable, Sendable, Equatable {
        package var gateway: String
        package var user: String
        /// The linked account's name, and its address.
        package var account: String
        package var address: String
        /// Linked in `bridge.toml` (else registered in band).
        package var configured: Bool

        package init(gateway: String, user: String, account: String, address: String, configured: Bool) {
            self.gateway = gateway
            self.user = user
            self.account = account
            self.address = address
            self.configured = configured
        }
    }

    package var ok: Bool
    package var error: String? = nil
    /// `omemo-fingerprints` (issue 41).
    package var omemo: OMEMOListing? = nil
    package var channels: [ChannelEntry]? = nil
    package var roster: [RosterEntry]? = nil
    package var transports: [TransportStatus]? = nil
    /// With several instances (issue 26): every instance that ever sent a heartbeat.
    package var instances: [InstanceStatus]? = nil
    package var queue: [QueueEntry]? = nil
    package var rooms: [RoomEntry]? = nil
    /// How many deliveries a queue request acted on.
    package var count: Int? = nil
    /// `history`: the archived messages, newest first (best first for a search).
    package var history: [ArchivedMessage]? = nil
    package var gatewayUsers: [GatewayUserEntry]? = nil

    package init(ok: Bool, error: String? = nil, channels: [ChannelEntry]? = nil, roster: [RosterEntry]? = nil, transports: [TransportStatus]? = nil, instances: [InstanceStatus]? = nil, queue: [QueueEntry]? = nil, rooms: [RoomEntry]? = nil, count: Int? = nil, history: [ArchivedMessage]? = nil, gatewayUsers: [GatewayUserEntry]? = nil) {
        self.ok = ok
        self.error = error
        self.channels = channels
        self.roster = roster
        self.transports = transports
        self.instances = instances
        self.queue = queue
        self.rooms = rooms
        self.count = count
        self.history = history
        self.gatewayUsers = gatewayUsers
    }
}

extension ControlResponse.QueueEntry {
    package init(_ item: QueueItemSummary) {
        self.init(
            sequence: item.delivery.sequence, state: item.state.rawValue, transport: item.delivery.target.transport,
            target: item.delivery.target.description, channel: item.delivery.channel, attempts: item.attempts,
            enqueuedAt: item.enqueuedAt, reason: item.reason, body: item.delivery.body
        )
    }
}
