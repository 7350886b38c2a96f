import OMEMO
import XMPP

/// Who xmpp-bridge says it is to XMPP peers: its name and version (XEP-0092), its caps node
/// (XEP-0115 §4) and, named after it, the session's identity and features (XEP-0030 §3.1);
/// the command line's `--version` too.
public enum BridgeIdentity {
    public static let name = "xmpp-bridge"
    public static let version = "0.1.0"
    public static let node = "https://github.com/xmpp-bridge/xmpp-bridge"

    /// The Bind 2 tag (XEP-0386): the server names the resource after it.
    public static let bindTag = "xmpp-bridge"

    /// How an account logs in where SASL2 is offered (XEP-0388): as this software, with
    /// Bind 2 where `bindInline` (XEP-0386), and FAST tokens asked for where `fast`
    /// (XEP-0484). The user agent id is the account's own, set from its kept state at each
    /// login; what Bind 2 enables, the session's own settings.
    public static func login(bindInline: Bool, fast: Bool) -> SASL2Login {
        SASL2Login(userAgent: SASL2Request.UserAgent(id: "", software: Self.name, device: nil), bindTag: bindInline ? Self.bindTag : nil, requestsToken: fast)
    }

    /// The session's configuration of who it is, with `policy` for subscription requests;
    /// an OMEMO device (issue 41) also asks for contacts' device lists (XEP-0163 §4 `+notify`).
    public static func session<Instant: InstantProtocol & Sendable>(
        subscriptionPolicy policy: SessionStateMachine<Instant>.SubscriptionPolicy, omemo: Bool = false
    ) -> SessionStateMachine<Instant>.Configuration {
        var capabilities = EntityCapabilities.session(named: Self.name)
        if omemo { capabilities.features.append(OMEMOPubSub.notifyFeature) }
        return SessionStateMachine<Instant>.Configuration(
            softwareName: Self.name, softwareVersion: Self.version, capabilitiesNode: Self.node, capabilities: capabilities, subscriptionPolicy: policy
        )
    }
}
