/// A user of a gateway: who they are on the component's server and which account's
/// contacts become their puppets (XEP-0100 §4.1: a registered user of a gateway).
public struct GatewayUser: Hashable, Sendable {
    /// The user's bare JID, lower-cased.
    public var jid: String
    /// The linked account's name (`[accounts.NAME]`).
    public var account: String
    /// Linked in `bridge.toml` (else registered in band).
    public var configured: Bool

    public init(jid: String, account: String, configured: Bool) {
        self.jid = jid.lowercased()
        self.account = account
        self.configured = configured
    }
}
