/// How an account logs in where the server offers SASL2 (XEP-0388): who it is
/// (`<user-agent>`), whether to bind with Bind 2 (XEP-0386) and enable what on the way, and
/// FAST (XEP-0484): a token to log in with, or asking for one. Where the server offers no
/// SASL2, or this is nil in ``StreamNegotiationStateMachine/Configuration``, the login is
/// RFC 6120's.
public struct SASL2Login: Hashable, Sendable {
    /// Sent on every login; its id ties the server's Bind 2 resource and FAST tokens to this
    /// installation.
    public var userAgent: SASL2Request.UserAgent
    /// Bind with Bind 2 under this tag where offered (the server names the resource
    /// `tag` + a suffix of its own); nil: bind as RFC 6120 §7 says, after SASL2.
    public var bindTag: String?
    /// Enable stream management (XEP-0198) in the Bind 2 request, where offered. An
    /// ``XMPPSession`` sets this and the two below from its own configuration
    /// (`streamManagement`, `resumesStreams`, `enableCarbons`), which they follow.
    public var enableStreamManagement: Bool
    /// Ask for a resumable stream management session (XEP-0198 §5).
    public var resumesStreams: Bool
    /// Enable message carbons (XEP-0280) in the Bind 2 request, where offered.
    public var enableCarbons: Bool
    /// A FAST token to log in with, where its mechanism is offered and usable on the
    /// connection; the caller passes only one not about to expire.
    public var token: FASTToken?
    /// Ask for a FAST token when logging in with the password.
    public var requestsToken: Bool

    public init(
        userAgent: SASL2Request.UserAgent, bindTag: String? = nil, enableStreamManagement: Bool = true, resumesStreams: Bool = true,
        enableCarbons: Bool = true, token: FASTToken? = nil, requestsToken: Bool = false
    ) {
        self.userAgent = userAgent
        self.bindTag = bindTag
        self.enableStreamManagement = enableStreamManagement
        self.resumesStreams = resumesStreams
        self.enableCarbons = enableCarbons
        self.token = token
        self.requestsToken = requestsToken
    }
}
