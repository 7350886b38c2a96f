/// Who may link an account through the gateway's in-band registration (XEP-0077):
/// nobody (`closed`), users whose bare JID matches an `allow` pattern (`allowlist`, the
/// default), or anyone who can reach the component (`open`).
public enum RegistrationPolicy: String, Hashable, Sendable, CaseIterable {
    case closed
    case allowlist
    case open

    /// Whether `user` (a bare JID) may register under this policy with these patterns
    /// (`*` matches any run of characters; compared lower-cased).
    public func allows(_ user: String, patterns: [String]) -> Bool {
        switch self {
        case .closed: false
        case .open: true
        case .allowlist: patterns.contains { Self.matches(user.lowercased(), pattern: $0.lowercased()) }
        }
    }

    /// Glob match with `*` only, without backtracking blow-up (greedy with one restart point).
    static func matches(_ text: String, pattern: String) -> Bool {
        let text = Array(text.utf8)
        let pattern = Array(pattern.utf8)
        var t = 0
        var p = 0
        var star: Int?
        var mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] != UInt8(ascii: "*"), pattern[p] == text[t] {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p
                mark = t
                p += 1
            } else if let star {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
