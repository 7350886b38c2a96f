/// Cuts long text into message-sized pieces: at most `maxBytes` UTF-8 bytes each, at line
/// ends where possible, never inside a character. Used where one input would exceed the
/// server's stanza limit (Prosody and ejabberd: 256 KiB).
public enum TextChunker {
    /// Splits `text` into pieces of at most `maxBytes` UTF-8 bytes, at line ends where possible.
    public static func split(_ text: String, maxBytes: Int) -> [String] {
        guard text.utf8.count > maxBytes else { return [text] }
        var pieces: [String] = []
        var current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = Substring(line)
            while line.utf8.count > maxBytes {
                var cut = line.startIndex
                var bytes = 0
                for index in line.indices {
                    let size = line[index].utf8.count
                    if bytes + size > maxBytes { break }
                    bytes += size
                    cut = line.index(after: index)
                }
                if cut == line.startIndex { cut = line.index(after: cut) }
                if !current.isEmpty { pieces.append(current); current = "" }
                pieces.append(String(line[..<cut]))
                line = line[cut...]
            }
            let addition = current.isEmpty ? String(line) : "\n" + line
            if current.utf8.count + addition.utf8.count > maxBytes {
                pieces.append(current)
                current = String(line)
            } else {
                current += addition
            }
        }
        if !current.isEmpty { pieces.append(current) }
        return pieces
    }
}
