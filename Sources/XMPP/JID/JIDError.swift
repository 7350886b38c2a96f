import Foundation

/// The reasons a string cannot become a ``JID`` (RFC 7622).
///
/// Every case carries enough context to explain what went wrong. The
/// `description` is a human-readable sentence suitable for logs and for error
/// stanzas' `<text/>` elements. Length limits are those of RFC 7622 §3.2
/// (domainpart), §3.3 (localpart) and §3.4 (resourcepart): each part must be
/// between 1 and 1023 octets of UTF-8 after preparation.
public enum JIDError: Error, Hashable, Sendable {
    /// Which of the three parts of a JID (RFC 7622 §3.1) an error concerns.
    public enum Part: String, Hashable, Sendable, CustomStringConvertible {
        case localpart
        case domainpart
        case resourcepart

        public var description: String { rawValue }
    }

    /// Structural problems of a domainpart (RFC 7622 §3.2).
    public enum DomainReason: Hashable, Sendable, CustomStringConvertible {
        /// Two dots in a row, or a leading dot (`a..b`, `.example.com`).
        case emptyLabel
        /// A DNS label longer than 63 octets (for a non-ASCII label: its A-label).
        case labelTooLong(label: String, bytes: Int)
        /// A label that starts or ends with `-`.
        case hyphenAtLabelBoundary(label: String)
        /// A non-ASCII label with `--` in its third and fourth positions (RFC 5891 §4.2.3.1).
        case hyphensInThirdAndFourthPosition(label: String)
        /// A label that begins with a combining mark (RFC 5891 §4.2.3.2).
        case leadingCombiningMark(label: String)
        /// A `:` outside brackets: a port (`example.com:5222`) or an unbracketed IPv6 address (`::1`).
        case colonOutsideIPv6Literal
        /// Brackets whose content is not an IPv6 address (`[zz::1]`), or unbalanced brackets.
        case invalidIPv6Literal(String)
        /// An all-numeric top label that is not a dotted-quad IPv4 address (`300.1.1.1`).
        case invalidIPv4Address(String)

        public var description: String {
            switch self {
            case .emptyLabel:
                return "the domain contains an empty label"
            case let .labelTooLong(label, bytes):
                return "the label '\(label)' is \(bytes) octets long in DNS form; at most 63 are allowed"
            case let .hyphenAtLabelBoundary(label):
                return "the label '\(label)' starts or ends with a hyphen"
            case let .hyphensInThirdAndFourthPosition(label):
                return "the label '\(label)' has hyphens in its third and fourth positions"
            case let .leadingCombiningMark(label):
                return "the label '\(label)' begins with a combining mark"
            case .colonOutsideIPv6Literal:
                return "a ':' is only allowed inside a bracketed IPv6 literal; ports are not part of a JID"
            case let .invalidIPv6Literal(text):
                return "'\(text)' is not a valid bracketed IPv6 address literal"
            case let .invalidIPv4Address(text):
                return "'\(text)' looks numeric but is not a valid IPv4 address"
            }
        }
    }

    /// The JID contains an `@` with nothing before it (RFC 7622 §3.3).
    case emptyLocalpart
    /// The JID has no domainpart, e.g. `juliet@` or `/foobar` (RFC 7622 §3.2).
    case emptyDomainpart
    /// The JID contains a `/` with nothing after it (RFC 7622 §3.4).
    case emptyResourcepart
    /// The prepared localpart is longer than 1023 octets (RFC 7622 §3.3).
    ///
    /// For the three `…TooLong` cases, `bytes` is the UTF-8 size after
    /// preparation, or the raw size when the input was over 4092 octets and was
    /// rejected without being prepared.
    case localpartTooLong(bytes: Int)
    /// The prepared domainpart is longer than 1023 octets (RFC 7622 §3.2).
    case domainpartTooLong(bytes: Int)
    /// The prepared resourcepart is longer than 1023 octets (RFC 7622 §3.4).
    case resourcepartTooLong(bytes: Int)
    /// One of `" & ' / : < > @`, which RFC 7622 §3.3.1 forbids in a localpart.
    case forbiddenCharacterInLocalpart(Character)
    /// A code point that the part's PRECIS string class (RFC 8264 §4) or
    /// IDNA2008 (RFC 5892) disallows, e.g. a symbol or space in a localpart,
    /// or a control character anywhere.
    case disallowedCodePoint(part: Part, scalar: Unicode.Scalar)
    /// A contextual code point (CONTEXTJ/CONTEXTO, RFC 5892 Appendix A) used
    /// outside the context that allows it, e.g. a MIDDLE DOT not between two `l`.
    case contextRuleViolation(part: Part, scalar: Unicode.Scalar)
    /// The domainpart is neither a valid domain name nor an IP literal (RFC 7622 §3.2).
    case invalidDomain(reason: DomainReason)
}

extension JIDError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .emptyLocalpart:
            return "invalid JID: the localpart before '@' is empty"
        case .emptyDomainpart:
            return "invalid JID: the domainpart is empty"
        case .emptyResourcepart:
            return "invalid JID: the resourcepart after '/' is empty"
        case let .localpartTooLong(bytes):
            return "invalid JID: the localpart is \(bytes) octets long; at most 1023 are allowed"
        case let .domainpartTooLong(bytes):
            return "invalid JID: the domainpart is \(bytes) octets long; at most 1023 are allowed"
        case let .resourcepartTooLong(bytes):
            return "invalid JID: the resourcepart is \(bytes) octets long; at most 1023 are allowed"
        case let .forbiddenCharacterInLocalpart(character):
            return "invalid JID: the character '\(character)' is not allowed in a localpart"
        case let .disallowedCodePoint(part, scalar):
            return "invalid JID: \(Self.describe(scalar)) is not allowed in the \(part)"
        case let .contextRuleViolation(part, scalar):
            return "invalid JID: \(Self.describe(scalar)) is not allowed in this position of the \(part)"
        case let .invalidDomain(reason):
            return "invalid JID: invalid domainpart: \(reason)"
        }
    }

    /// `U+265A '♚'`, or just `U+0000` for invisible characters.
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator,
             .unassigned, .privateUse, .surrogate, .nonspacingMark, .enclosingMark, .spacingMark:
            return code
        default:
            return "\(code) '\(Character(scalar))'"
        }
    }
}

extension JIDError: LocalizedError {
    public var errorDescription: String? { description }
}
