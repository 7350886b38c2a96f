/// How a client secures its connection (RFC 6120 §5, §13.7; RFC 7590).
///
/// The default verifies the server's chain against the system trust store and its
/// name against the JID domain, and requires TLS 1.2 or newer.
public struct TLSConfiguration: Hashable, Sendable {
    /// How the server certificate is checked.
    public enum CertificateVerification: Hashable, Sendable {
        /// Chain against the trust store and name against the expected host (default).
        case full
        /// Nothing is checked. Only for tests against throwaway servers; logged on every connect.
        case insecureNoVerification
    }

    public var certificateVerification: CertificateVerification
    /// Extra trusted CA certificates (PEM), added to the system store, e.g. for a self-signed server.
    public var additionalTrustRootsFile: String?
    /// Whether the system trust store is used.
    public var useSystemTrustStore: Bool
    /// Whether a server certificate may name the host by an XMPP identity (XmppAddr or
    /// SRV-ID, RFC 6120 §13.7.1.2) when its DNS names do not: true for XMPP servers; the
    /// HTTPS client turns it off, where only DNS-IDs count (RFC 9110 §4.3.4).
    public var acceptsXMPPIdentities: Bool = true

    public init(
        certificateVerification: CertificateVerification = .full,
        additionalTrustRootsFile: String? = nil,
        useSystemTrustStore: Bool = true
    ) {
        self.certificateVerification = certificateVerification
        self.additionalTrustRootsFile = additionalTrustRootsFile
        self.useSystemTrustStore = useSystemTrustStore
    }
}
