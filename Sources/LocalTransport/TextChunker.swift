import TransportCore

/// Cuts long text into message-sized pieces: at most `maxBytes` UTF-8 bytes each, at line
/// ends where possible, never inside a character. Used where one input would exceed the
/// server's stanza limit (Prosody and ejabberd: 256 KiB).
public enum TextChunker {
    /// Splits `text` into pieces of at most `maxBytes` UTF-8 bytes. Where the cut falls
    /// between lines, the pieces joined with "\n" give back the input exactly (empty lines
    /// included). A line longer than `maxBytes` is cut between characters, or between
    /// Unicode scalars inside one oversized character (only a limit below 4 bytes can then
    /// be exceeded, by a single scalar).
    public static func split(_ text: String, maxBytes: Int) -> [String] {
        let maxBytes = max(1, maxBytes)
        guard text.utf8.count > maxBytes else { return [text] }
        var pieces: [String] = []
        var current = ""
        var started = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(line)
            if rest.utf8.count > maxBytes {
                if started { pieces.append(current) }
                current = ""
                started = false
                while rest.utf8.count > maxBytes {
                    let (head, tail) = Self.cut(rest, maxBytes: maxBytes)
                    pieces.append(head)
                    rest = tail
                }
            }
            if started, current.utf8.count + 1 + rest.utf8.count > maxBytes {
                pieces.append(current)
                current = String(rest)
            } else {
                current += started ? "\n" + rest : String(rest)
            }
            started = true
        }
        if started { pieces.append(current) }
        return pieces
    }

    /// The longest prefix of `text` within `maxBytes`, cut between characters where one fits.
    private static func cut(_ text: Substring, maxBytes: Int) -> (String, Substring) {
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            if bytes + size > maxBytes { break }
            bytes += size
            end = text.index(after: index)
        }
        if end > text.startIndex { return (String(text[..<end]), text[end...]) }
        // One character alone is over the limit: cut between its scalars.
        var scalars = String.UnicodeScalarView()
        var scalarEnd = text.unicodeScalars.startIndex
        for index in text.unicodeScalars.indices {
            let scalar = text.unicodeScalars[index]
            if bytes + scalar.utf8.count > maxBytes { break }
            bytes += scalar.utf8.count
            scalars.append(scalar)
            scalarEnd = text.unicodeScalars.index(after: index)
        }
        if scalars.isEmpty, let first = text.unicodeScalars.first {
            // Not even one scalar fits a limit this small: take it alone so the loop ends.
            scalars.append(first)
            scalarEnd = text.unicodeScalars.index(after: text.unicodeScalars.startIndex)
        }
        return (String(scalars), text[scalarEnd...])
    }
}
