/// The `<stream:features/>` a server offers, as far as negotiation needs them
/// (RFC 6120 §4.3.2, §5.4.1, §6.4.1, §7.4; RFC 3921 §3 session; XEP-0440; XEP-0388).
public struct StreamFeatures: Hashable, Sendable {
    /// STARTTLS offered; `startTLSRequired` when it carries `<required/>`.
    public var startTLS: Bool
    public var startTLSRequired: Bool
    /// SASL mechanism names, in the server's order.
    public var mechanisms: [String]
    /// Channel-binding types the server supports (XEP-0440), e.g. `tls-exporter`.
    public var channelBindingTypes: [String]
    /// Resource binding offered.
    public var bind: Bool
    /// The legacy session IQ is offered and not marked `<optional/>`.
    public var sessionRequired: Bool
    /// SASL2 login (XEP-0388) and what it may inline; nil when not offered.
    public var sasl2: SASL2Features?
    /// Every feature element, for later layers (stream management, roster versioning, …).
    public var elements: [XMLElement]

    public init(_ element: XMLElement) {
        self.elements = element.elements
        let startTLS = element.firstChild(named: "starttls", namespace: XMPPNamespace.tls)
        self.startTLS = startTLS != nil
        self.startTLSRequired = startTLS?.firstChild(named: "required") != nil
        self.mechanisms =
            element.firstChild(named: "mechanisms", namespace: XMPPNamespace.sasl)?
            .elements.filter { $0.name == "mechanism" }.map { $0.text } ?? []
        self.channelBindingTypes =
            element.firstChild(named: "sasl-channel-binding", namespace: XMPPNamespace.saslChannelBinding)?
            .elements.compactMap { $0[attribute: "type"] } ?? []
        self.bind = element.firstChild(named: "bind", namespace: XMPPNamespace.bind) != nil
        self.sasl2 = SASL2Features(element)
        let session = element.firstChild(named: "session", namespace: XMPPNamespace.session)
        self.sessionRequired = session != nil && session?.firstChild(named: "optional") == nil
    }
}
