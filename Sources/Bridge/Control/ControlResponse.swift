/// The answer to a ``ControlRequest``.
struct ControlResponse: Codable, Sendable {
    struct Member: Codable, Sendable, Equatable {
        var transport: String
        var address: String?
        var direction: String
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
    }

    var ok: Bool
    var error: String?
    var channels: [ChannelEntry]?
    var roster: [RosterEntry]?
    var transports: [TransportStatus]?
}
