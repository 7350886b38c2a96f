/// The SASL mechanisms this library implements (RFC 6120 §6.3.3), ordered by
/// strength.
///
/// The raw value is the IANA-registered mechanism name sent in
/// `<auth mechanism='…'/>`. Comparison (`<`) orders by ``strength``: a
/// channel-bound SCRAM variant (RFC 5802 §6, RFC 9266) beats any unbound one,
/// SHA-256 beats SHA-1 (RFC 7677), and every SCRAM variant beats PLAIN
/// (RFC 4616), which reveals the password to the server.
public enum SASLMechanism: String, Hashable, Sendable, CaseIterable, Comparable {
    /// SCRAM-SHA-256 with channel binding (RFC 7677, RFC 5802 §6).
    case scramSHA256Plus = "SCRAM-SHA-256-PLUS"
    /// SCRAM-SHA-1 with channel binding (RFC 5802 §6).
    case scramSHA1Plus = "SCRAM-SHA-1-PLUS"
    /// SCRAM-SHA-256 without channel binding (RFC 7677).
    case scramSHA256 = "SCRAM-SHA-256"
    /// SCRAM-SHA-1 without channel binding (RFC 5802).
    case scramSHA1 = "SCRAM-SHA-1"
    /// PLAIN (RFC 4616): the password travels in the clear inside the stream.
    case plain = "PLAIN"

    /// The name sent on the wire.
    public var name: String { self.rawValue }

    /// Higher is stronger; used to pick among the offered mechanisms.
    public var strength: Int {
        switch self {
        case .scramSHA256Plus: 4
        case .scramSHA1Plus: 3
        case .scramSHA256: 2
        case .scramSHA1: 1
        case .plain: 0
        }
    }

    /// The SCRAM hash function, or `nil` for PLAIN.
    public var hashAlgorithm: HashAlgorithm? {
        switch self {
        case .scramSHA256Plus, .scramSHA256: .sha256
        case .scramSHA1Plus, .scramSHA1: .sha1
        case .plain: nil
        }
    }

    /// Whether this is a `-PLUS` variant that needs channel-binding data.
    public var usesChannelBinding: Bool {
        switch self {
        case .scramSHA256Plus, .scramSHA1Plus: true
        case .scramSHA256, .scramSHA1, .plain: false
        }
    }

    /// All mechanisms, strongest first.
    public static let strongestFirst: [SASLMechanism] = allCases.sorted { $0 > $1 }

    public static func < (lhs: SASLMechanism, rhs: SASLMechanism) -> Bool {
        lhs.strength < rhs.strength
    }
}
