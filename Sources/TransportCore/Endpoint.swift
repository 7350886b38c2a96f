/// Where messages enter or leave the bridge: a transport plus an address. For an XMPP
/// transport (one per account) the address is a contact's bare JID, e.g. account `work`
/// + `alice@work.example`; a local transport (stdin, FIFO, socket) has no address.
public struct Endpoint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The transport's configured name: an account name or a local transport name.
    public var transport: String
    /// A bare JID (lower-cased as JIDs compare), or nil for a local transport.
    public var address: String?

    public init(transport: String, address: String? = nil) {
        self.transport = transport
        self.address = address
    }

    /// The endpoint as routing compares it: its address lower-cased (JIDs compare so).
    public var normalized: Endpoint {
        Endpoint(transport: self.transport, address: self.address?.lowercased())
    }

    public var description: String {
        self.address.map { "\(self.transport):\($0)" } ?? self.transport
    }

    /// The endpoint a ``description`` names: `transport:address`, or a transport alone.
    public init(description: String) {
        let parts = description.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        self.init(transport: String(parts[0]), address: parts.count > 1 ? String(parts[1]) : nil)
    }
}
