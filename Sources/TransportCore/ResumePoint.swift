/// Where a source picks up its history after a gap or a restart: for an XMPP account its
/// archive cursor (XEP-0313 §4.1.2: the last archive id it read), for a room the room's.
/// The bridge stores it in order with the messages before it and hands it back at the next
/// start; only the transport that made it reads ``position``.
public struct ResumePoint: Hashable, Sendable, Codable {
    /// The position, in the transport's own notation.
    public var position: String
    /// The key it is stored under when it is not the transport's own (a room's, named by
    /// the transport); nil: the transport's name.
    public var key: String?

    public init(_ position: String, key: String? = nil) {
        self.position = position
        self.key = key
    }

    /// The key it is stored under for `transport`.
    public func storageKey(transport: String) -> String {
        self.key ?? transport
    }
}
