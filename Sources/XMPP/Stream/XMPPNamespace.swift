/// Namespaces used in stream negotiation (RFC 6120 §4.8, §5–§7; XEP-0440).
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
}
