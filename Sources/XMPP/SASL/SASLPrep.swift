import Foundation

/// SASLprep (RFC 4013), the stringprep profile (RFC 3454) for user names and
/// passwords in SASL PLAIN (RFC 4616 §2) and SCRAM (RFC 5802 §2.2, §5.1).
///
/// Implemented: mapping of non-ASCII spaces to U+0020 and removal of the
/// "commonly mapped to nothing" characters (RFC 4013 §2.1), NFKC
/// normalization (§2.2), and the prohibited-output tables C.1.2 through C.9
/// (§2.3). Not implemented: the bidirectional-text check (§2.4, RFC 3454 §6),
/// which needs Unicode bidi classes the standard library does not expose, and
/// the unassigned-code-point check, which RFC 4013 §2.5 does not apply to
/// queries such as authentication. An empty result is rejected because both
/// PLAIN and SCRAM require non-empty names and passwords.
enum SASLPrep {
    /// Why a string cannot be prepared.
    enum Violation: Error, Hashable, Sendable, CustomStringConvertible {
        /// The prepared string is empty.
        case empty
        /// The string contains a character SASLprep prohibits.
        case prohibited(Unicode.Scalar)

        var description: String {
            switch self {
            case .empty:
                return "empty after SASLprep"
            case .prohibited(let scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                return "contains prohibited character U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)"
            }
        }
    }

    /// Prepares `string` per RFC 4013 (see the type documentation for scope).
    static func prepare(_ string: String) throws(Violation) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in string.unicodeScalars {
            if self.isMappedToNothing(scalar) {
                continue
            }
            mapped.append(self.isNonASCIISpace(scalar) ? " " : scalar)
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping
        for scalar in normalized.unicodeScalars where self.isProhibited(scalar) {
            throw .prohibited(scalar)
        }
        guard !normalized.isEmpty else { throw .empty }
        return normalized
    }

    // MARK: - Tables (RFC 3454 appendices)

    /// RFC 3454 B.1.
    private static func isMappedToNothing(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00AD, 0x034F, 0x1806, 0x180B...0x180D, 0x200B...0x200D, 0x2060,
             0xFE00...0xFE0F, 0xFEFF:
            true
        default:
            false
        }
    }

    /// RFC 3454 C.1.2.
    private static func isNonASCIISpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00A0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000:
            true
        default:
            false
        }
    }

    /// RFC 4013 §2.3: RFC 3454 C.1.2, C.2.1, C.2.2, C.3, C.4, C.5, C.6, C.7, C.8, C.9.
    private static func isProhibited(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if self.isNonASCIISpace(scalar) {
            return true
        }
        // C.4: non-character code points, including U+nFFFE and U+nFFFF in every plane.
        if value & 0xFFFE == 0xFFFE {
            return true
        }
        switch value {
        case 0x0000...0x001F, 0x007F:  // C.2.1
            return true
        case 0x0080...0x009F, 0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029,
             0x2060...0x2063, 0x206A...0x206F, 0xFEFF, 0xFFF9...0xFFFC,
             0x1D173...0x1D17A:  // C.2.2
            return true
        case 0xE000...0xF8FF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD:  // C.3
            return true
        case 0xFDD0...0xFDEF:  // C.4
            return true
        case 0xD800...0xDFFF:  // C.5 (unrepresentable in a Swift String; kept for completeness)
            return true
        case 0xFFFD:  // C.6 (U+FFF9–U+FFFC are covered by C.2.2)
            return true
        case 0x2FF0...0x2FFB:  // C.7
            return true
        case 0x0340, 0x0341, 0x200E, 0x200F, 0x202A...0x202E:  // C.8
            return true
        case 0xE0001, 0xE0020...0xE007F:  // C.9
            return true
        default:
            return false
        }
    }
}
