import Foundation
import TransportCore

/// A channel's filters (issue 25): `ignore` (a text matching any expression is not relayed
/// into the channel), `replace` (expressions applied in order to the text every target
/// gets) and `only_from` (the senders that may relay: bare-JID globs for contacts, or
/// `nick:NAME` for room occupants and local inputs, whose address says nothing of them).
/// Applied by the ``Router`` after the echo check, per channel. Pure.
package struct ChannelFilter: Sendable {
    /// A compiled regular expression (ICU syntax, as `NSRegularExpression`); immutable once
    /// made, and matching is thread-safe.
    package struct Pattern: @unchecked Sendable {
        package let source: String
        private let expression: NSRegularExpression

        /// Why a text is not a regular expression.
        package struct Invalid: Error, CustomStringConvertible {
            package var source: String
            package var underlying: (any Error)?
            package var description: String {
                "'\(self.source)' is not a valid regular expression" + (self.underlying.map { " (\($0.localizedDescription))" } ?? "")
            }

            package init(source: String, underlying: (any Error)? = nil) {
                self.source = source
                self.underlying = underlying
            }
        }

        /// The expression, or why it is not one.
        package init(_ source: String) throws(Invalid) {
            do {
                self.expression = try NSRegularExpression(pattern: source)
            } catch {
                throw Invalid(source: source, underlying: error)
            }
            self.source = source
        }

        /// Its capture groups (a replacement may name `$1`…`$n`).
        package var groups: Int { self.expression.numberOfCaptureGroups }

        package func matches(_ text: String) -> Bool {
            self.expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }

        package func replacing(in text: String, with template: String) -> String {
            self.expression.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
        }
    }

    /// Who may relay: a bare-JID glob (`*` any run, `?` one character; case-insensitive)
    /// for a contact, or a nick (`nick:bob`) for a room occupant or a local input. A
    /// contact's nick is a roster name or its localpart, a room's sender has only its
    /// nick: each pattern is matched only against what identifies that kind of sender.
    package enum AllowedSender: Hashable, Sendable {
        case jid(String)
        case nick(String)

        package init(_ text: String) {
            self = text.hasPrefix("nick:") ? .nick(String(text.dropFirst(5))) : .jid(text.lowercased())
        }

        /// - Parameter contact: the sender's bare JID when it is a contact; nil for a room
        ///   occupant or a local input.
        package func matches(contact: String?, nick: String) -> Bool {
            switch self {
            case .nick(let name): return contact == nil && name == nick
            case .jid(let glob): return contact.map { Self.glob(glob, matches: $0.lowercased()) } ?? false
            }
        }

        package static func glob(_ pattern: String, matches text: String) -> Bool {
            let pattern = Array(pattern)
            let text = Array(text)
            var (p, t, star, mark) = (0, 0, -1, 0)
            while t < text.count {
                if p < pattern.count, pattern[p] == "*" {
                    star = p
                    mark = t
                    p += 1
                } else if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                    p += 1
                    t += 1
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

    package var ignore: [Pattern] = []
    package var replace: [(pattern: Pattern, with: String)] = []
    /// nil: every member may relay.
    package var onlyFrom: [AllowedSender]?

    /// Whether `message` may enter the channel: its sender allowed, its text not ignored.
    /// - Parameter fromRoom: the source is a room (its address is the room's, not the sender's).
    package func admits(_ message: InboundMessage, text: String?, fromRoom: Bool) -> Bool {
        let contact = fromRoom ? nil : message.source.address
        if let onlyFrom, !onlyFrom.contains(where: { $0.matches(contact: contact, nick: message.nick) }) { return false }
        guard let text else { return true }
        return !self.ignore.contains { $0.matches(text) }
    }

    /// `text` with every replacement applied in order.
    package func rewrite(_ text: String) -> String {
        self.replace.reduce(text) { text, rule in rule.pattern.replacing(in: text, with: rule.with) }
    }

    package init(ignore: [Pattern] = [], replace: [(pattern: Pattern, with: String)] = [], onlyFrom: [AllowedSender]? = nil) {
        self.ignore = ignore
        self.replace = replace
        self.onlyFrom = onlyFrom
    }
}
