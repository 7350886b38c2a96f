import Foundation

/// The ASCII shortcuts of JID preparation: what almost every JID is.
extension JIDPartPreparation {
    /// NFC; the identity for ASCII, which is almost every JID, so that case skips the work.
    static func nfc(_ string: String) -> String {
        string.utf8.allSatisfy { $0 < 0x80 } ? string : string.precomposedStringWithCanonicalMapping
    }

    /// A domainpart that is already a canonical ASCII host name (RFC 7622 §3.2): lowercase
    /// letters, digits and inner hyphens in labels of 1…63, no trailing dot, not an IP
    /// literal. Such a name prepares to itself, so almost every stanza's JIDs skip the
    /// Unicode mapping, normalisation and per-label checks (issue 21: JID preparation was
    /// 3–5 % of the relay's CPU). Nil: take the full path (which may also accept it).
    static func canonicalASCIIDomainpart(_ raw: some Collection<Unicode.Scalar>) -> String? {
        var count = 0
        var labelLength = 0
        var labelAllDigits = true
        var previous: UInt32 = 0x2E  // "."
        for scalar in raw {
            let value = scalar.value
            count += 1
            guard count <= 253 else { return nil }
            switch value {
            case 0x61...0x7A:  // a-z
                labelLength += 1
                labelAllDigits = false
            case 0x30...0x39:  // 0-9
                labelLength += 1
            case 0x2D:  // "-": not first in a label
                guard labelLength > 0 else { return nil }
                labelLength += 1
                labelAllDigits = false
            case 0x2E:  // ".": ends a non-empty label that does not end in "-"
                guard labelLength > 0, previous != 0x2D else { return nil }
                labelLength = 0
                labelAllDigits = true
            default:
                return nil
            }
            guard labelLength <= 63 else { return nil }
            previous = value
        }
        // Empty, a trailing dot or hyphen, or an all-digit top label (an IPv4 address,
        // checked as such on the full path).
        guard labelLength > 0, previous != 0x2D, !labelAllDigits else { return nil }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: raw)
        return String(text)
    }
}
