/// How a stream logged in, for the session and the log: the profile and mechanism, the
/// channel binding, FAST's token news, and what Bind 2 (XEP-0386) enabled on the way so
/// that the session does not ask again.
public struct LoginOutcome: Hashable, Sendable {
    /// RFC 6120's SASL (with a stream restart) or XEP-0388's SASL2.
    public enum Profile: String, Hashable, Sendable {
        case sasl
        case sasl2
    }

    public var profile: Profile = .sasl
    /// The mechanism that authenticated (`SCRAM-SHA-256-PLUS`, `HT-SHA-256-EXPR`, …).
    public var mechanism: String?
    /// The channel binding of a SCRAM login; nil without.
    public var channelBinding: ChannelBindingChoice.ChannelBindingType?
    /// The server's SCRAM offers were checked with XEP-0474's hash.
    public var downgradeProtected = false
    /// Logged in with a FAST token (XEP-0484 §3.4): no password hashing.
    public var usedToken = false
    /// The server refused the FAST token it was offered: forget it.
    public var tokenRefused = false
    /// A FAST token the server gave, asked for or rotated in: keep it.
    public var newToken: FASTToken?
    /// The resource was bound by Bind 2 in the login's round trip.
    public var boundInline = false
    /// The answer to stream management's inline `<enable/>` (`<enabled/>` or `<failed/>`,
    /// XEP-0198 §"SASL2 and Bind2"); nil when not enabled inline.
    public var streamManagementAnswer: XMLElement?
    /// Message carbons were enabled inline (XEP-0280; no answer is sent).
    public var carbonsEnabled = false
    /// The round trips of the negotiation: stream headers and elements the client sent and
    /// waited on (TCP's and TLS's handshakes not counted).
    public var roundTrips = 0

    public init() {}

    /// For the log: `sasl2 SCRAM-SHA-256-PLUS tls-exporter bind2`, never a secret.
    public var summary: String {
        var words = [self.profile.rawValue, self.mechanism ?? "?"]
        if let binding = self.channelBinding { words.append(binding.rawValue) }
        if self.downgradeProtected { words.append("ssdp") }
        if self.boundInline { words.append("bind2") }
        if self.tokenRefused { words.append("token-refused") }
        if self.newToken != nil { words.append("new-token") }
        words.append("round-trips=\(self.roundTrips)")
        return words.joined(separator: " ")
    }
}
