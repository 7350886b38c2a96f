extension EntityCapabilities {
    /// What an ``XMPPSession`` answers and uses, for disco#info and caps (XEP-0030 §3.1,
    /// XEP-0115 §4):
    /// one identity (category `client`, type `bot` unless given) named `name`, and exactly
    /// the features it implements: caps, disco#info, software version (XEP-0092), ping
    /// (XEP-0199) and carbons (XEP-0280).
    public static func session(named name: String, category: String = "client", type: String = "bot") -> EntityCapabilities {
        EntityCapabilities(
            identities: [Identity(category: category, type: type, name: name)],
            features: [
                EntityCapabilities.namespace,
                EntityCapabilities.discoInfoNamespace,
                "jabber:iq:version",
                "urn:xmpp:ping",
                CarbonFilter.namespace,
            ]
        )
    }
}
