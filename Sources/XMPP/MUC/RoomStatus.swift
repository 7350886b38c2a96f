/// A room as the account sees it now, for status reports (XEP-0045).
public struct RoomStatus: Hashable, Sendable, Codable {
    /// Where the account is with the room.
    public enum State: String, Hashable, Sendable, Codable {
        /// The account is offline.
        case offline
        case joining
        case joined
        /// Out of the room for now; rejoining soon.
        case waiting
        /// Out of the room for good (until a reload); `reason` says why.
        case stopped
    }

    public var jid: String
    public var nick: String
    public var state: State
    public var reason: String?
    public var occupants: Int

    public init(jid: String, nick: String, state: State, reason: String?, occupants: Int) {
        self.jid = jid
        self.nick = nick
        self.state = state
        self.reason = reason
        self.occupants = occupants
    }
}
