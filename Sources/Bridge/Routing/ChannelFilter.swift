import Foundation
import TransportCore

/// A channel's filters (issue 25): `ignore` (a body matching any expression is not relayed
/// into the channel), `replace` (expressions applied in order to the text every target
/// gets) and `only_from` (the senders that may relay: bare-JID globs, or `nick:NAME`).
/// Applied by the ``Router`` after the echo check, per channel. Pure.
struct ChannelFilter: Sendable {
    /// A compiled regular expression (ICU syntax, as `NSRegularExpression`); immutable once
    /// made, and matching is thread-safe.
    struct Pattern: @unchecked Sendable {
        let source: String
        private let expression: NSRegularExpression

        /// Why a text is not a regular expression.
        struct Invalid: Error, CustomStringConvertible {
            var source: String
            var description: String { "'\(self.source)' is not a valid regular expression" }
        }

        /// The expression, or why it is not one.
        init(_ source: String) throws(Invalid) {
            do {
                self.expression = try NSRegularExpression(pattern: source)
            } catch {
                throw Invalid(source: source)
            }
            self.source = source
        }

        func matches(_ text: String) -> Bool {
            self.expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }

        func replacing(in text: String, with template: String) -> String {
            self.expression.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
        }
    }

    /// Who may relay: a bare-JID glob (`*` any run, `?` one character; case-insensitive)
    /// or a nick (`nick:bob`).
    enum Sender: Hashable, Sendable {
        case jid(String)
        case nick(String)

        init(_ text: String) {
            self = text.hasPrefix("nick:") ? .nick(String(text.dropFirst(5))) : .jid(text.lowercased())
        }

        func matches(address: String?, nick: String) -> Bool {
            switch self {
            case .nick(let name): return name == nick
            case .jid(let glob): return address.map { Self.glob(glob, matches: $0.lowercased()) } ?? false
            }
        }

        static func glob(_ pattern: String, matches text: String) -> Bool {
            let pattern = Array(pattern)
            let text = Array(text)
            var (p, t, star, mark) = (0, 0, -1, 0)
            while t < text.count {
                if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                    p += 1
                    t += 1
                } else if p < pattern.count, pattern[p] == "*" {
                    star = p
                    mark = t
                    p += 1
                } else if star >= 0 {
                    p = star + 1
                    mark += 1
                    t = mark
                } else {
                    return false
                }
            }
            while p < pattern.count, pattern[p] == "*" { p += 1 }
            return p == pattern.count
        }
    }

    var ignore: [Pattern] = []
    var replace: [(pattern: Pattern, with: String)] = []
    /// nil: every member may relay.
    var onlyFrom: [Sender]?

    /// Whether `message` may enter the channel: its sender allowed, its text not ignored.
    func admits(_ message: InboundMessage, text: String?) -> Bool {
        if let onlyFrom, !onlyFrom.contains(where: { $0.matches(address: message.source.address, nick: message.nick) }) { return false }
        guard let text else { return true }
        return !self.ignore.contains { $0.matches(text) }
    }

    /// `text` with every replacement applied in order.
    func rewrite(_ text: String) -> String {
        self.replace.reduce(text) { text, rule in rule.pattern.replacing(in: text, with: rule.with) }
    }
}
