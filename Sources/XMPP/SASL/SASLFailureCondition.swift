/// The SASL failure conditions a server reports inside `<failure/>`
/// (RFC 6120 §6.5.1–§6.5.11).
///
/// The raw value is the condition element's local name in the
/// `urn:ietf:params:xml:ns:xmpp-sasl` namespace.
public enum SASLFailureCondition: String, Hashable, Sendable, CaseIterable {
    /// The client sent `<abort/>` (RFC 6120 §6.5.1).
    case aborted = "aborted"
    /// The account is disabled (RFC 6120 §6.5.2).
    case accountDisabled = "account-disabled"
    /// The credentials have expired (RFC 6120 §6.5.3).
    case credentialsExpired = "credentials-expired"
    /// The mechanism requires an encrypted stream (RFC 6120 §6.5.4).
    case encryptionRequired = "encryption-required"
    /// The client's data was not valid base64 (RFC 6120 §6.5.5).
    case incorrectEncoding = "incorrect-encoding"
    /// The authorization identity is invalid or not permitted (RFC 6120 §6.5.6).
    case invalidAuthzid = "invalid-authzid"
    /// The requested mechanism is not supported (RFC 6120 §6.5.7).
    case invalidMechanism = "invalid-mechanism"
    /// The request was malformed (RFC 6120 §6.5.8).
    case malformedRequest = "malformed-request"
    /// The mechanism is weaker than the server's policy allows (RFC 6120 §6.5.9).
    case mechanismTooWeak = "mechanism-too-weak"
    /// The credentials are wrong (RFC 6120 §6.5.10).
    case notAuthorized = "not-authorized"
    /// A temporary server-side error; retrying later may succeed (RFC 6120 §6.5.11).
    case temporaryAuthFailure = "temporary-auth-failure"

    /// The namespace of SASL elements and their failure conditions (RFC 6120 §6.4).
    public static let namespace = "urn:ietf:params:xml:ns:xmpp-sasl"

    /// Maps a condition element's local name to its condition, or `nil` for a
    /// name RFC 6120 does not define.
    ///
    /// A parser that finds an unknown or missing condition should report
    /// ``notAuthorized``, the generic condition, rather than drop the failure.
    public init?(elementName: String) {
        self.init(rawValue: elementName)
    }

    /// The condition element's local name.
    public var elementName: String { self.rawValue }
}
