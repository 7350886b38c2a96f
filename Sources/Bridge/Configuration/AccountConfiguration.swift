import XMPP

/// One `[accounts.NAME]` table of `bridge.toml`: an XMPP account the bridge logs in to.
struct AccountConfiguration: Sendable {
    var name: String
    var client: XMPPClientConfiguration
    var password: PasswordSource
    var subscriptionPolicy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy
    /// The largest stanza the account's server takes (bytes, after escaping); longer
    /// deliveries are split into parts (default 64 KiB).
    var maxStanzaBytes: Int = 65_536
    /// Use stream management (XEP-0198) when the server offers it: deliveries are confirmed
    /// by the server's acknowledgements, and received messages are acknowledged only once
    /// they are committed (default true).
    var streamManagement: Bool = true

    static let keys = [
        "jid", "resource", "password_file", "password_env", "password_command", "host", "port", "tls", "ca_file", "insecure",
        "subscription_policy", "max_stanza_bytes", "stream_management",
    ]
}
