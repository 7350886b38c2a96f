/// Everything needed to connect one account, except the password (RFC 6120 §3, §5, §6).
///
/// Defaults are the safe ones: STARTTLS required, certificate verified against the
/// system trust store and the JID domain, SCRAM preferred, PLAIN only inside TLS.
public struct XMPPClientConfiguration: Sendable {
    /// The account. A resourcepart, if present, is requested at bind time.
    public var jid: JID
    public var tlsMode: TLSMode
    public var tls: TLSConfiguration
    /// Connect here instead of looking up SRV records.
    public var host: String?
    /// Port for `host`; defaults to 5222 (STARTTLS) or 5223 (Direct TLS).
    public var port: Int?
    /// Per TCP connection attempt.
    public var connectTimeout: Duration
    /// From TCP connect to a bound resource.
    public var negotiationTimeout: Duration
    public var limits: XMLStreamLimits
    public var sasl: SASLConfiguration
    /// Log in with SASL2 (XEP-0388) where the server offers it, with Bind 2 and FAST as
    /// set there; nil: RFC 6120's SASL and bind only.
    public var sasl2: SASL2Login?

    public init(
        jid: JID,
        tlsMode: TLSMode = .startTLS,
        tls: TLSConfiguration = TLSConfiguration(),
        host: String? = nil,
        port: Int? = nil,
        connectTimeout: Duration = .seconds(10),
        negotiationTimeout: Duration = .seconds(30),
        limits: XMLStreamLimits = XMLStreamLimits(),
        sasl: SASLConfiguration = SASLConfiguration(),
        sasl2: SASL2Login? = nil
    ) {
        self.jid = jid
        self.tlsMode = tlsMode
        self.tls = tls
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.negotiationTimeout = negotiationTimeout
        self.limits = limits
        self.sasl = sasl
        self.sasl2 = sasl2
    }
}
