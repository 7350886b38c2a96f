/// One request on the control socket (JSON line) or from `xmpp-bridge route` offline:
/// list the routing table, or add or remove a channel member at run time.
struct ControlRequest: Codable, Sendable {
    enum Operation: String, Codable, Sendable {
        case list
        case add
        case remove
    }

    var op: Operation
    var channel: String?
    /// An account or local transport name.
    var transport: String?
    /// A contact's JID, for account members.
    var address: String?
    var direction: String?
}

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

    var ok: Bool
    var error: String?
    var channels: [ChannelEntry]?
}
