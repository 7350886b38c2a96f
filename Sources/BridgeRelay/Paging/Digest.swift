/// The one message a minute's postponed flood becomes (issue 24): "+37 more:" and the first
/// lines, the full text as a file where the target's server offers upload (XEP-0363),
/// else the whole text (split to fit like any long delivery). Pure.
package enum Digest {
    /// Lines shown before the file's link.
    package static let previewLines = 5

    /// `bodies` (one per postponed message) as the digest's full text: every line.
    package static func fullText(_ bodies: [String]) -> String {
        "+\(bodies.count) more:\n" + bodies.joined(separator: "\n")
    }

    /// The short text that goes with the uploaded file: the count and the first lines.
    package static func summary(_ bodies: [String], url: String) -> String {
        let lines = bodies.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false) }
        var text = "+\(bodies.count) more: " + lines.prefix(Self.previewLines).joined(separator: "\n")
        if lines.count > Self.previewLines { text += "\n… (\(lines.count - Self.previewLines) more lines in the file)" }
        return text + "\n" + url
    }
}
