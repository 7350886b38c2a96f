extension XMLElement {
    /// Whether this is a stanza of a client stream (RFC 6120 §8): a message, presence or IQ
    /// in `jabber:client`, what stream management counts (XEP-0198 §4).
    var isStanza: Bool {
        switch self.name {
        case "message", "presence", "iq": self.namespace == XMPPNamespace.client
        default: false
        }
    }
}
