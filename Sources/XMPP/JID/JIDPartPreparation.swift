import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Preparation and enforcement of the three parts of a JID (RFC 7622 §3.2–§3.4).
///
/// - Localpart: PRECIS `UsernameCaseMapped` profile (RFC 8265 §3.3) on the
///   `IdentifierClass` (RFC 8264 §4.2): width mapping, lowercase mapping, NFC,
///   then the code points are checked; RFC 7622 §3.3.1 additionally forbids
///   `" & ' / : < > @`.
/// - Domainpart: RFC 7622 §3.2: width mapping, lowercase mapping, NFC, IDNA2008
///   label separators mapped to `.`, one trailing `.` removed; then either a
///   bracketed IPv6 literal, a dotted-quad IPv4 address, or a domain name whose
///   labels are checked against the IDNA2008 derived property (RFC 5892).
/// - Resourcepart: PRECIS `OpaqueString` profile (RFC 8265 §4.2) on the
///   `FreeformClass` (RFC 8264 §4.3): non-ASCII spaces mapped to U+0020, NFC,
///   case preserved.
///
/// Every part must be 1...1023 octets of UTF-8 after preparation.
///
/// Approximations (Swift exposes no PRECIS/IDNA tables, so the derived property
/// is computed from `Unicode.Scalar.Properties` of the toolchain's Unicode
/// version rather than looked up in the IANA registry):
/// - Width mapping: every scalar in the Halfwidth and Fullwidth Forms block
///   (U+FF00–U+FFEF) and U+3000 is replaced by its NFKC form, instead of
///   consulting the `<wide>`/`<narrow>` decomposition type.
/// - Case mapping: per-scalar full lowercase mapping without the context
///   sensitive Final_Sigma rule (so `Σ` always becomes `σ`, `ς` stays `ς`).
/// - `HasCompat` is `NFKC(cp) != cp`, computed with Foundation; for domain
///   labels it stands in for IDNA2008 `Unstable` (`NFKC_Casefold(cp) != cp`).
/// - Script tests in the CONTEXTO rules (Greek, Hebrew, Hiragana/Katakana/Han)
///   use block ranges; the CONTEXTJ rule for ZERO WIDTH NON-JOINER only
///   accepts it after a virama (the Joining_Type alternative is not checked).
/// - Old Hangul Jamo are the conjoining jamo ranges (Hangul_Syllable_Type L/V/T).
/// - The Bidi Rule (RFC 5893), which the localpart and domainpart profiles
///   apply to right-to-left strings, is not enforced.
/// - ASCII domain labels may contain `_` (common in practice, not LDH), and
///   A-labels (`xn--…`) are accepted without decoding them.
/// - An all-numeric last label means the domain must be an IPv4 address.
/// - IPv6 literals are canonicalised with `inet_ntop` (so `[0::1]` == `[::1]`).
enum JIDPartPreparation {
    /// RFC 7622 §3.2–§3.4: maximum size of each part, in UTF-8 octets.
    static let maximumPartBytes = 1023

    /// Maximum size of a DNS label in octets (RFC 1035 §2.3.4).
    static let maximumLabelBytes = 63

    /// Raw input longer than this is rejected before it is prepared, so that
    /// hostile input cannot make preparation expensive. Preparation shrinks
    /// UTF-8 by at most a factor of 3 (fullwidth → ASCII, KELVIN SIGN → `k`,
    /// conjoining Hangul jamo → syllable), so nothing valid is lost; the error
    /// then reports the raw size.
    static let maximumRawBytes = 4 * maximumPartBytes

    /// The UTF-8 size of `raw` if it exceeds ``maximumRawBytes``.
    static func excessiveRawBytes(_ raw: some Collection<Unicode.Scalar>) -> Int? {
        var bytes = 0
        for scalar in raw {
            bytes += UTF8.width(scalar)
        }
        return bytes > maximumRawBytes ? bytes : nil
    }

    // MARK: - Parts

    /// Prepares and enforces a localpart (RFC 7622 §3.3, RFC 8265 §3.3).
    static func prepareLocalpart(_ raw: some Collection<Unicode.Scalar>) throws(JIDError) -> String {
        if raw.isEmpty { throw .emptyLocalpart }
        if let bytes = excessiveRawBytes(raw) { throw .localpartTooLong(bytes: bytes) }
        var mapped = String.UnicodeScalarView()
        for scalar in widthMapped(raw) {
            appendLowercased(scalar, to: &mapped)
        }
        let prepared = Self.nfc(String(mapped))
        let bytes = prepared.utf8.count
        if bytes == 0 { throw .emptyLocalpart }
        if bytes > maximumPartBytes { throw .localpartTooLong(bytes: bytes) }

        let scalars = Array(prepared.unicodeScalars)
        for scalar in scalars where forbiddenInLocalpart(scalar) {
            throw .forbiddenCharacterInLocalpart(Character(scalar))
        }
        try enforce(scalars, stringClass: .identifier, part: .localpart)
        return prepared
    }

    /// Prepares and enforces a resourcepart (RFC 7622 §3.4, RFC 8265 §4.2).
    static func prepareResourcepart(_ raw: some Collection<Unicode.Scalar>) throws(JIDError) -> String {
        if raw.isEmpty { throw .emptyResourcepart }
        if let bytes = excessiveRawBytes(raw) { throw .resourcepartTooLong(bytes: bytes) }
        var mapped = String.UnicodeScalarView()
        for scalar in raw {
            // OpaqueString additional mapping rule: non-ASCII space → U+0020.
            if scalar.value > 0x7F, scalar.properties.generalCategory == .spaceSeparator {
                mapped.append(" ")
            } else {
                mapped.append(scalar)
            }
        }
        let prepared = Self.nfc(String(mapped))
        let bytes = prepared.utf8.count
        if bytes == 0 { throw .emptyResourcepart }
        if bytes > maximumPartBytes { throw .resourcepartTooLong(bytes: bytes) }
        try enforce(Array(prepared.unicodeScalars), stringClass: .freeform, part: .resourcepart)
        return prepared
    }

    /// Prepares and enforces a domainpart (RFC 7622 §3.2).
    static func prepareDomainpart(_ raw: some Collection<Unicode.Scalar>) throws(JIDError) -> String {
        if let canonical = canonicalASCIIDomainpart(raw) { return canonical }
        return try prepareDomainpartInFull(raw)
    }

    static func prepareDomainpartInFull(_ raw: some Collection<Unicode.Scalar>) throws(JIDError) -> String {
        if raw.isEmpty { throw .emptyDomainpart }
        if let bytes = excessiveRawBytes(raw) { throw .domainpartTooLong(bytes: bytes) }
        var mapped = String.UnicodeScalarView()
        for scalar in widthMapped(raw) {
            switch scalar.value {
            case 0x3002, 0xFF0E, 0xFF61:
                // IDNA2008 label separators (RFC 5895 §2 step 5).
                mapped.append(".")
            default:
                appendLowercased(scalar, to: &mapped)
            }
        }
        var prepared = Self.nfc(String(mapped))
        if prepared.unicodeScalars.last == "." {
            prepared.unicodeScalars.removeLast()
        }
        let bytes = prepared.utf8.count
        if bytes == 0 { throw .emptyDomainpart }
        if bytes > maximumPartBytes { throw .domainpartTooLong(bytes: bytes) }

        let scalars = Array(prepared.unicodeScalars)
        if scalars.first == "[" {
            return try ipv6Literal(scalars)
        }
        if scalars.contains(":") {
            throw .invalidDomain(reason: .colonOutsideIPv6Literal)
        }
        let labels = scalars.split(separator: ".", omittingEmptySubsequences: false)
        if labels.contains(where: \.isEmpty) {
            throw .invalidDomain(reason: .emptyLabel)
        }
        if let top = labels.last, top.allSatisfy({ ("0"..."9").contains($0) }) {
            guard isIPv4Address(prepared) else {
                throw .invalidDomain(reason: .invalidIPv4Address(prepared))
            }
            return prepared
        }
        for label in labels {
            try enforceDomainLabel(Array(label))
        }
        return prepared
    }

    // MARK: - Mappings

    /// PRECIS width mapping rule (RFC 8264 §9.3, approximated; see type docs).

    static func widthMapped(_ scalars: some Collection<Unicode.Scalar>) -> String.UnicodeScalarView {
        var output = String.UnicodeScalarView()
        for scalar in scalars {
            if scalar.value == 0x3000 || (0xFF00...0xFFEF).contains(scalar.value) {
                let mapped = String(Character(scalar)).precomposedStringWithCompatibilityMapping
                output.append(contentsOf: mapped.unicodeScalars)
            } else {
                output.append(scalar)
            }
        }
        return output
    }

    /// Full lowercase mapping of one scalar, without Final_Sigma context.
    static func appendLowercased(_ scalar: Unicode.Scalar, to output: inout String.UnicodeScalarView) {
        if scalar.isASCII {
            if ("A"..."Z").contains(scalar), let lower = Unicode.Scalar(scalar.value + 0x20) {
                output.append(lower)
            } else {
                output.append(scalar)
            }
        } else if scalar.properties.changesWhenLowercased {
            output.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
        } else {
            output.append(scalar)
        }
    }

    /// RFC 7622 §3.3.1: characters forbidden in a localpart.
    static func forbiddenInLocalpart(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\"", "&", "'", "/", ":", "<", ">", "@": return true
        default: return false
        }
    }

    // MARK: - Derived property (RFC 8264 §8, RFC 5892 §3)

    /// The string classes whose derived property values are computed.
    enum StringClass {
        /// PRECIS IdentifierClass (RFC 8264 §4.2).
        case identifier
        /// PRECIS FreeformClass (RFC 8264 §4.3).
        case freeform
        /// IDNA2008 (RFC 5892), for domain labels; ASCII is LDH plus `_`.
        case idna
    }

    /// A derived property value.
    enum Verdict: Equatable {
        case valid
        case contextJ
        case contextO
        case disallowed
    }

    /// Checks every scalar of `scalars` against `stringClass`, including the
    /// contextual rules.
    static func enforce(_ scalars: [Unicode.Scalar], stringClass: StringClass, part: JIDError.Part) throws(JIDError) {
        for index in scalars.indices {
            let scalar = scalars[index]
            switch derivedProperty(of: scalar, in: stringClass) {
            case .valid:
                continue
            case .disallowed:
                throw .disallowedCodePoint(part: part, scalar: scalar)
            case .contextJ, .contextO:
                if !contextRuleHolds(at: index, in: scalars) {
                    throw .contextRuleViolation(part: part, scalar: scalar)
                }
            }
        }
    }

    /// The derived property value of one code point (RFC 8264 §8 order of rules;
    /// for `.idna`, RFC 5892 §3).
    static func derivedProperty(of scalar: Unicode.Scalar, in stringClass: StringClass) -> Verdict {
        // Printable ASCII first: no exception or Unicode property lookup is needed for it.
        if (0x21...0x7E).contains(scalar.value) {
            switch stringClass {
            case .identifier, .freeform:
                return .valid
            case .idna:
                switch scalar {
                case "a"..."z", "0"..."9", "-", "_": return .valid
                default: return .disallowed
                }
            }
        }
        if let exception = exceptions(scalar) {
            return exception
        }
        let properties = scalar.properties
        let category = properties.generalCategory
        if category == .unassigned || category == .surrogate {
            return .disallowed
        }
        if scalar.isASCII {
            switch stringClass {
            case .identifier, .freeform:
                // ASCII7 (0x21–0x7E) is PVALID; U+0020 falls through to Spaces.
                if (0x21...0x7E).contains(scalar.value) { return .valid }
            case .idna:
                switch scalar {
                case "a"..."z", "0"..."9", "-", "_": return .valid
                default: return .disallowed
                }
            }
        }
        if properties.isJoinControl {
            return .contextJ
        }
        if isOldHangulJamo(scalar) {
            return .disallowed
        }
        if properties.isDefaultIgnorableCodePoint || properties.isNoncharacterCodePoint {
            return .disallowed
        }
        if category == .control {
            return .disallowed
        }
        if hasCompatibilityDecomposition(scalar) {
            return stringClass == .freeform ? .valid : .disallowed
        }
        if stringClass == .idna, isIgnorableBlock(scalar) {
            return .disallowed
        }
        switch category {
        case .lowercaseLetter, .uppercaseLetter, .otherLetter, .decimalNumber,
             .modifierLetter, .nonspacingMark, .spacingMark:
            return .valid
        case .titlecaseLetter, .letterNumber, .otherNumber, .enclosingMark,
             .spaceSeparator,
             .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol,
             .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation:
            return stringClass == .freeform ? .valid : .disallowed
        default:
            return .disallowed
        }
    }

    /// RFC 5892 §2.6 Exceptions (shared by PRECIS, RFC 8264 §9.6).
    static func exceptions(_ scalar: Unicode.Scalar) -> Verdict? {
        switch scalar.value {
        case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007:
            return .valid
        case 0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB, 0x0660...0x0669, 0x06F0...0x06F9:
            return .contextO
        case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:
            return .disallowed
        default:
            return nil
        }
    }

    /// RFC 5892 Appendix A rules for CONTEXTJ and CONTEXTO code points.
    static func contextRuleHolds(at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
        let scalar = scalars[index]
        let before: Unicode.Scalar? = index > scalars.startIndex ? scalars[index - 1] : nil
        let after: Unicode.Scalar? = index + 1 < scalars.endIndex ? scalars[index + 1] : nil
        switch scalar.value {
        case 0x200C, 0x200D:
            // A.1/A.2: after a virama (canonical combining class 9).
            return before?.properties.canonicalCombiningClass == .virama
        case 0x00B7:
            // A.3 MIDDLE DOT: between two 'l'.
            return before == "l" && after == "l"
        case 0x0375:
            // A.4 GREEK LOWER NUMERAL SIGN: followed by Greek.
            return after.map(isGreek) ?? false
        case 0x05F3, 0x05F4:
            // A.5/A.6 HEBREW GERESH/GERSHAYIM: preceded by Hebrew.
            return before.map(isHebrew) ?? false
        case 0x30FB:
            // A.7 KATAKANA MIDDLE DOT: some Hiragana, Katakana or Han in the string.
            return scalars.contains(where: isHiraganaKatakanaOrHan)
        case 0x0660...0x0669:
            // A.8: no Extended Arabic-Indic digits in the string.
            return !scalars.contains { (0x06F0...0x06F9).contains($0.value) }
        case 0x06F0...0x06F9:
            // A.9: no Arabic-Indic digits in the string.
            return !scalars.contains { (0x0660...0x0669).contains($0.value) }
        default:
            return false
        }
    }

    /// `HasCompat` (RFC 8264 §9.17): NFKC(cp) != cp.
    static func hasCompatibilityDecomposition(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return false }
        if scalar.isASCII { return false }
        let string = String(Character(scalar))
        return string.precomposedStringWithCompatibilityMapping.unicodeScalars.elementsEqual(string.unicodeScalars) == false
    }

    /// `OldHangulJamo` (RFC 8264 §9.9): Hangul_Syllable_Type L, V or T.
    static func isOldHangulJamo(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x11FF, 0xA960...0xA97C, 0xD7B0...0xD7C6, 0xD7CB...0xD7FB:
            return true
        default:
            return false
        }
    }

    /// IDNA2008 `IgnorableBlocks` (RFC 5892 §2.4).
    static func isIgnorableBlock(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20D0...0x20FF, 0x1D100...0x1D1FF, 0x1D200...0x1D24F:
            return true
        default:
            return false
        }
    }

    static func isGreek(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0370...0x0373, 0x0376...0x03E1, 0x03F0...0x03FF, 0x1D26...0x1D2A, 0x1F00...0x1FFF, 0x10140...0x1018F:
            return true
        default:
            return false
        }
    }

    static func isHebrew(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0591...0x05F4, 0xFB1D...0xFB4F:
            return true
        default:
            return false
        }
    }

    static func isHiraganaKatakanaOrHan(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30FB, 0x30FC, 0x3099...0x309C:
            return false  // Script=Common or Inherited.
        case 0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9D,  // Hiragana, Katakana
             0x2E80...0x2FDF, 0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B,  // Han
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF:
            return true
        default:
            return false
        }
    }

    // MARK: - Domain labels and IP literals

    /// Checks one non-numeric domain label (RFC 5891 §4.2, RFC 1035 §2.3.4).
    static func enforceDomainLabel(_ label: [Unicode.Scalar]) throws(JIDError) {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: label)
        let labelText = String(text)

        try enforce(label, stringClass: .idna, part: .domainpart)
        if label.first == "-" || label.last == "-" {
            throw .invalidDomain(reason: .hyphenAtLabelBoundary(label: labelText))
        }
        if label.allSatisfy(\.isASCII) {
            if label.count > maximumLabelBytes {
                throw .invalidDomain(reason: .labelTooLong(label: labelText, bytes: label.count))
            }
            return
        }
        if label.count >= 4, label[2] == "-", label[3] == "-" {
            throw .invalidDomain(reason: .hyphensInThirdAndFourthPosition(label: labelText))
        }
        if let first = label.first {
            switch first.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                throw .invalidDomain(reason: .leadingCombiningMark(label: labelText))
            default:
                break
            }
        }
        let aLabelBytes = Punycode.encode(label).map { 4 + $0.utf8.count } ?? Int.max
        if aLabelBytes > maximumLabelBytes {
            throw .invalidDomain(reason: .labelTooLong(label: labelText, bytes: aLabelBytes))
        }
    }

    /// Validates and canonicalises a bracketed IPv6 literal (RFC 7622 §3.2,
    /// RFC 3986 §3.2.2 `IP-literal` without IPvFuture).
    static func ipv6Literal(_ scalars: [Unicode.Scalar]) throws(JIDError) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        let original = String(text)
        guard scalars.count > 2, scalars.first == "[", scalars.last == "]" else {
            throw .invalidDomain(reason: .invalidIPv6Literal(original))
        }
        let inner = scalars.dropFirst().dropLast()
        let allowed = inner.allSatisfy { scalar in
            switch scalar {
            case "0"..."9", "a"..."f", ":", ".": return true
            default: return false
            }
        }
        var innerText = String.UnicodeScalarView()
        innerText.append(contentsOf: inner)
        guard allowed, let canonical = canonicalIPv6(String(innerText)) else {
            throw .invalidDomain(reason: .invalidIPv6Literal(original))
        }
        return "[" + canonical + "]"
    }

    /// `inet_pton`/`inet_ntop` round trip; nil if `text` is not an IPv6 address.
    static func canonicalIPv6(_ text: String) -> String? {
        var address = [UInt8](repeating: 0, count: 16)
        let parsed = address.withUnsafeMutableBytes { buffer in
            text.withCString { inet_pton(AF_INET6, $0, buffer.baseAddress) }
        }
        guard parsed == 1 else { return nil }
        var output = [CChar](repeating: 0, count: 64)
        let formatted = address.withUnsafeBytes { source in
            output.withUnsafeMutableBufferPointer { destination in
                inet_ntop(AF_INET6, source.baseAddress, destination.baseAddress, socklen_t(destination.count))
            }
        }
        guard formatted != nil else { return nil }
        let bytes = output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self).lowercased()
    }

    /// True for a dotted-quad IPv4 address (as `inet_pton(AF_INET)` accepts).
    static func isIPv4Address(_ text: String) -> Bool {
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }) else { return false }
        var address = [UInt8](repeating: 0, count: 4)
        let parsed = address.withUnsafeMutableBytes { buffer in
            text.withCString { inet_pton(AF_INET, $0, buffer.baseAddress) }
        }
        return parsed == 1
    }
}
