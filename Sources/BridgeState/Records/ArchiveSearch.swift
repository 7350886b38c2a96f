/// Turns what a user typed into `history --search` or `?q=` into a full-text query
/// (issue 25): every word must appear (case ignored), each taken literally (quoted, so
/// `AND`, `-`, `"` and parentheses are text, never syntax); a word ending in `*` matches
/// as a prefix (`deploy*`). Words without a letter or digit are left out, as the index
/// has none. Pure; nil or empty when nothing searchable is left.
package enum ArchiveSearch {
    /// One word of a search: its text, and whether it matches as a prefix.
    package struct Term: Hashable, Sendable {
        package var text: String
        package var prefix: Bool

        package init(text: String, prefix: Bool) {
            self.text = text
            self.prefix = prefix
        }
    }

    /// The searchable words of `text`, in order.
    package static func terms(_ text: String) -> [Term] {
        text.split(whereSeparator: { $0.isWhitespace }).compactMap { word in
            let prefix = word.count > 1 && word.hasSuffix("*")
            let literal = prefix ? word.dropLast() : word
            guard literal.contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
            return Term(text: String(literal), prefix: prefix)
        }
    }

    /// The SQLite FTS5 expression for `text` (accents ignored too: the index removes them).
    package static func expression(_ text: String) -> String? {
        let terms = Self.terms(text).map { term in
            "\"" + term.text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (term.prefix ? " *" : "")
        }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }

    /// The PostgreSQL `tsquery` text of a prefix term for `to_tsquery`: the word quoted as
    /// one lexeme, with `:*`.
    package static func prefixQuery(_ term: Term) -> String {
        "'" + term.text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "':*"
    }

    /// The `LIKE` pattern (a backslash escapes) for every full address of the bare JID
    /// `sender`: its text taken literally, then `/` and anything.
    package static func resourcesPattern(_ sender: String) -> String {
        sender.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "/%"
    }
}
