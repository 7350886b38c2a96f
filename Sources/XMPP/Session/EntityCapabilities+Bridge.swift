extension EntityCapabilities {
    /// What xmpp-bridge is and implements, for disco#info and caps (XEP-0030, XEP-0115):
    /// identity client/bot and exactly the features answered or used.
    public static let bridge = EntityCapabilities(
        identities: [Identity(category: "client", type: "bot", name: "xmpp-bridge")],
        features: [
            EntityCapabilities.namespace,
            EntityCapabilities.discoInfoNamespace,
            "jabber:iq:version",
            "urn:xmpp:ping",
            CarbonFilter.namespace,
        ]
    )
}
