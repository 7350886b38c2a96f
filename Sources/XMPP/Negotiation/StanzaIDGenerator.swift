/// Makes unique stanza ids (RFC 6120 §8.1.3): an injected prefix plus a counter,
/// so tests are deterministic and production ids are unguessable per connection.
public struct StanzaIDGenerator: Sendable {
    private let prefix: String
    private var counter: UInt64

    public init(prefix: String, start: UInt64 = 1) {
        self.prefix = prefix
        self.counter = start
    }

    public mutating func next() -> String {
        defer { self.counter &+= 1 }
        return "\(self.prefix)-\(self.counter)"
    }
}
