/// Namespaces used in stream negotiation (RFC 6120 §4.8, §5–§7; XEP-0440; XEP-0388,
/// XEP-0386, XEP-0484).
public enum XMPPNamespace {
    public static let client = "jabber:client"
    /// A component's stream (XEP-0114 §3).
    public static let componentAccept = "jabber:component:accept"
    public static let stream = "http://etherx.jabber.org/streams"
    public static let streamErrors = "urn:ietf:params:xml:ns:xmpp-streams"
    public static let tls = "urn:ietf:params:xml:ns:xmpp-tls"
    public static let sasl = "urn:ietf:params:xml:ns:xmpp-sasl"
    public static let bind = "urn:ietf:params:xml:ns:xmpp-bind"
    public static let session = "urn:ietf:params:xml:ns:xmpp-session"
    public static let stanzas = "urn:ietf:params:xml:ns:xmpp-stanzas"
    public static let saslChannelBinding = "urn:xmpp:sasl-cb:0"
    /// Extensible SASL Profile, SASL2 (XEP-0388).
    public static let sasl2 = "urn:xmpp:sasl:2"
    /// Bind 2 (XEP-0386), as both servers of today speak it (the XEP's examples in
    /// XEP-0198 still show the obsolete `urn:xmpp:bind2:1`).
    public static let bind2 = "urn:xmpp:bind:0"
    /// Fast Authentication Streamlining Tokens (XEP-0484).
    public static let fast = "urn:xmpp:fast:0"
}
