/// How the client stream is secured (RFC 6120 §5; XEP-0368).
public enum TLSMode: String, Hashable, Sendable, CaseIterable {
    /// Connect in plaintext and upgrade with STARTTLS; refuse to go on without it (default).
    case startTLS = "starttls"
    /// TLS from the first byte (XEP-0368 Direct TLS).
    case directTLS = "direct"
    /// Use STARTTLS when offered, else continue in plaintext. Only allowed towards
    /// loopback addresses; meant for local test servers.
    case plaintextOnLoopback = "plaintext-loopback"
}
