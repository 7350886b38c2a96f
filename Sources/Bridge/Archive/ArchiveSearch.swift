/// Turns what a user typed into `history --search` or `?q=` into an SQLite FTS5 query
/// (issue 25): every word must appear (case and accents ignored), each taken literally
/// (quoted, so `AND`, `-`, `"` and parentheses are text, never syntax); a word ending in
/// `*` matches as a prefix (`deploy*`). Words without a letter or digit are left out, as
/// the index has none. Pure; nil when nothing searchable is left.
enum ArchiveSearch {
    static func expression(_ text: String) -> String? {
        var terms: [String] = []
        for word in text.split(whereSeparator: { $0.isWhitespace }) {
            let prefix = word.count > 1 && word.hasSuffix("*")
            let literal = prefix ? word.dropLast() : word
            guard literal.contains(where: { $0.isLetter || $0.isNumber }) else { continue }
            terms.append("\"" + literal.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (prefix ? " *" : ""))
        }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }
}
