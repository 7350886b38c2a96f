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

    public init(endpoint: Endpoint, direction: Direction) {
        self.endpoint = endpoint
        self.direction = direction
    }
}
