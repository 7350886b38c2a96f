@_exported import ThrowawayProsody

/// A real XMPP server the tests start themselves (``ProsodyServer``, ``EjabberdServer``):
/// in a temporary directory, on loopback, on random free ports, with a certificate made at
/// start for `domain` (and rooms on `mucDomain`). Tests that should hold against every
/// server take one of these.
public protocol TestXMPPServer: AnyObject, Sendable {
    var domain: String { get }
    var mucDomain: String { get }
    var directory: String { get }
    var c2sPort: Int { get }
    var directTLSPort: Int { get }
    /// The certificate clients must trust (nil without TLS).
    var certificate: SelfSignedCertificate? { get }
    func register(_ user: String, password: String) throws
    /// Stops the server and starts it again on the same ports with the same data.
    func restart() throws
    func stop()
    /// Stops the server and deletes its directory.
    func shutdown()
    /// The end of the server's log, for failure messages.
    func logTail(lines: Int) -> String
    /// The message bodies the server's archive holds for `owner` (a user's localpart, or a
    /// room's bare JID), read from its storage; nil where the tests cannot read it.
    func archivedBodies(of owner: String) throws -> Set<String>?
}

extension TestXMPPServer {
    public func archivedBodies(of owner: String) throws -> Set<String>? { nil }
}

/// The demo's Prosody launcher (``ThrowawayProsody``) is one of the test servers.
extension ProsodyServer: TestXMPPServer {}
