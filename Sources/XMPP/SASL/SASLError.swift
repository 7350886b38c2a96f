/// Why a SASL negotiation (RFC 6120 §6, RFC 4422) could not complete.
///
/// Descriptions never contain the password; peer-provided text is included
/// only as a short excerpt.
public enum SASLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// None of the offered mechanisms is both supported and permitted by the
    /// configuration (RFC 6120 §6.4.1). Carries the names the server offered.
    case noAcceptableMechanism(offered: [String])
    /// PLAIN was the only usable mechanism, but it would send the password in
    /// the clear over an unencrypted stream (RFC 4616 §6, RFC 6120 §13.8).
    case plainWithoutTLS
    /// The username could not be prepared with SASLprep (RFC 4013), or is empty.
    case invalidUsername(String)
    /// The password could not be prepared with SASLprep (RFC 4013), or is empty.
    /// Deliberately carries no detail.
    case invalidPassword
    /// The client nonce is empty or contains characters outside the SCRAM
    /// `printable` set (RFC 5802 §7).
    case invalidClientNonce
    /// A server message did not follow the SCRAM grammar (RFC 5802 §7) or the
    /// SASL exchange (RFC 6120 §6.4).
    case malformedChallenge(String)
    /// The server nonce does not extend the client nonce (RFC 5802 §5.1 `r`).
    case serverNonceMismatch
    /// The server sent a mandatory extension (`m=`) we do not support
    /// (RFC 5802 §5.1).
    case unsupportedMandatoryExtension(String)
    /// The server's PBKDF2 iteration count exceeds the configured maximum, which
    /// bounds the CPU time a server can make us spend (RFC 5802 §5.1 `i`, §9).
    case iterationCountTooHigh(maximum: Int)
    /// The server reported an error in its final message (`e=`, RFC 5802 §7).
    case serverError(String)
    /// The server reported success without proving knowledge of the password
    /// (no `v=`, RFC 5802 §3, §5.1): the server is not authenticated.
    case missingServerSignature
    /// The server signature (`v=`) is wrong: the server is not authenticated
    /// (RFC 5802 §3).
    case invalidServerSignature
    /// A SASL element's character data was not valid base64 (RFC 6120 §6.4.2).
    case invalidBase64
    /// An event arrived that the exchange does not allow at this point
    /// (RFC 6120 §6.4), such as `<success/>` before the SCRAM exchange ended.
    case unexpectedEvent(String)
    /// The server ended the exchange with `<failure/>` (RFC 6120 §6.4.5, §6.5).
    case failure(condition: SASLFailureCondition, text: String?)
    /// A SASL2 `<success/>` broke XEP-0388 §2.6.1 (no authorization identifier, a bare
    /// JID where a bind or resumption succeeded, …).
    case malformedOutcome(String)
    /// The server's channel-binding offers contradict each other (XEP-0440 §3 rules 4 and
    /// 5): what an attacker who removed some of them would leave.
    case channelBindingInconsistent(String)
    /// The server's downgrade-protection hash (XEP-0474 `h=`) does not match the
    /// mechanisms and channel-binding types we received: an offer was removed on the way.
    case downgradeDetected
    /// We settled for no channel binding only because the server announced types we do not
    /// support, and its server-first-message carries no downgrade-protection hash
    /// (XEP-0474 §4): we cannot tell that nothing was removed.
    case downgradeProtectionMissing

    public var description: String {
        switch self {
        case .noAcceptableMechanism(let offered):
            let list = offered.isEmpty ? "none" : offered.joined(separator: ", ")
            return "no acceptable SASL mechanism (server offered: \(list))"
        case .plainWithoutTLS:
            return "refusing SASL PLAIN without TLS: the password would be sent in the clear"
        case .invalidUsername(let reason):
            return "username cannot be used for SASL: \(reason)"
        case .invalidPassword:
            return "password cannot be used for SASL (empty or contains prohibited characters)"
        case .invalidClientNonce:
            return "SCRAM client nonce is empty or not printable ASCII without ','"
        case .malformedChallenge(let detail):
            return "malformed SASL server message: \(detail)"
        case .serverNonceMismatch:
            return "SCRAM server nonce does not extend the client nonce"
        case .unsupportedMandatoryExtension(let name):
            return "SCRAM server requires unsupported mandatory extension '\(name)'"
        case .iterationCountTooHigh(let maximum):
            return "SCRAM iteration count exceeds the configured maximum of \(maximum)"
        case .serverError(let value):
            return "SCRAM server error: \(value)"
        case .missingServerSignature:
            return "server reported success without a SCRAM server signature: server not authenticated"
        case .invalidServerSignature:
            return "SCRAM server signature is invalid: server not authenticated"
        case .invalidBase64:
            return "SASL payload is not valid base64"
        case .unexpectedEvent(let detail):
            return "unexpected SASL event: \(detail)"
        case .malformedOutcome(let detail):
            return "malformed SASL2 outcome: \(detail)"
        case .channelBindingInconsistent(let detail):
            return "refusing the server's channel-binding offers: \(detail) (XEP-0440)"
        case .downgradeDetected:
            return "SCRAM downgrade protection: the server's hash of its offers does not match what arrived (XEP-0474): refusing"
        case .downgradeProtectionMissing:
            return "no channel binding we support and no downgrade-protection hash from the server (XEP-0474): refusing"
        case .failure(let condition, let text):
            if let text, !text.isEmpty {
                return "SASL failure: \(condition.rawValue) (\(text))"
            }
            return "SASL failure: \(condition.rawValue)"
        }
    }

    /// Shortens peer-provided text for inclusion in an error.
    static func excerpt(_ text: some StringProtocol, limit: Int = 128) -> String {
        guard text.count > limit else { return String(text) }
        return String(text.prefix(limit)) + "…"
    }

    /// Shortens peer-provided bytes, decoded leniently as UTF-8, for inclusion in an error.
    static func excerpt(bytes: some Collection<UInt8>, limit: Int = 128) -> String {
        self.excerpt(String(decoding: bytes.prefix(limit * 4), as: UTF8.self), limit: limit)
    }
}
