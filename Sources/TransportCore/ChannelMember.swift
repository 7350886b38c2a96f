/// A channel member: an endpoint and which way messages may flow for it.
public struct ChannelMember: Hashable, Sendable, Codable {
    /// `in`: what it sends enters the channel; `out`: it receives the channel's traffic;
    /// `inout`: both.
    public enum Direction: String, Hashable, Sendable, Codable, CaseIterable {
        case `in`
        case out
        case `inout`

        public var sends: Bool { self != .out }
        public var receives: Bool { self != .in }
    }

    public var endpoint: Endpoint
    public var direction: Direction
    /// Set when the endpoint's address is a room (XEP-0045) the account joins, not a contact.
    public var room: RoomMembership?

    public init(endpoint: Endpoint, direction: Direction, room: RoomMembership? = nil) {
        self.endpoint = endpoint
        self.direction = direction
        self.room = room
    }
}
