import TransportCore

/// Splits a byte stream into lines for local inputs (stdin, FIFOs, sockets): bounded
/// line length, CR LF or LF endings, and a decision on invalid UTF-8. Pure and
/// incremental: feed any chunks, take complete lines.
public struct LineSplitter: Sendable {
    /// What to do with bytes that are not UTF-8.
    public enum InvalidUTF8Policy: String, Sendable, CaseIterable {
        /// Replace each bad sequence with U+FFFD and keep the line (default).
        case replace
        /// Drop the line and report it.
        case reject
    }

    /// One result of splitting.
    public enum Line: Hashable, Sendable {
        case text(String)
        /// A line longer than the limit; its bytes were discarded up to the next newline.
        case tooLong(bytes: Int)
        /// A line whose invalid UTF-8 was replaced with U+FFFD under
        /// ``InvalidUTF8Policy/replace``; relayed, and the reader logs it.
        case repaired(String)
        /// A line with invalid UTF-8 under ``InvalidUTF8Policy/reject``.
        case invalidUTF8
    }

    public let maxLineBytes: Int
    public let invalidUTF8: InvalidUTF8Policy
    private var current: [UInt8] = []
    /// While a too-long line is being skipped: its length so far.
    private var skipping: Int?
    /// Whether the last byte was a carriage return (not counted if a line feed follows).
    private var lastWasCR = false

    public init(maxLineBytes: Int = 64 * 1024, invalidUTF8: InvalidUTF8Policy = .replace) {
        self.maxLineBytes = max(1, maxLineBytes)
        self.invalidUTF8 = invalidUTF8
    }

    /// Feeds bytes and appends every completed line to `lines`.
    public mutating func feed(_ bytes: some Sequence<UInt8>, into lines: inout [Line]) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                self.endLine(into: &lines)
                continue
            }
            defer { self.lastWasCR = byte == UInt8(ascii: "\r") }
            if let skipped = self.skipping {
                self.skipping = skipped + 1
                continue
            }
            // A carriage return may be the one byte past the limit: CR LF ends the line.
            let fits = self.current.count < self.maxLineBytes
                || (self.current.count == self.maxLineBytes && byte == UInt8(ascii: "\r"))
            guard fits else {
                self.skipping = self.current.count + 1
                self.current.removeAll(keepingCapacity: true)
                continue
            }
            self.current.append(byte)
        }
    }

    /// At end of input: the last line if it had no newline.
    public mutating func finish(into lines: inout [Line]) {
        if !self.current.isEmpty || self.skipping != nil {
            self.endLine(into: &lines)
        }
    }

    private mutating func endLine(into lines: inout [Line]) {
        defer {
            self.current.removeAll(keepingCapacity: true)
            self.skipping = nil
            self.lastWasCR = false
        }
        if let skipped = self.skipping {
            lines.append(.tooLong(bytes: self.lastWasCR ? skipped - 1 : skipped))
            return
        }
        if self.current.last == UInt8(ascii: "\r") { self.current.removeLast() }
        let text = String(decoding: self.current, as: UTF8.self)
        // Decoding repaired something exactly when the bytes differ.
        guard !text.utf8.elementsEqual(self.current) else {
            lines.append(.text(text))
            return
        }
        switch self.invalidUTF8 {
        case .replace: lines.append(.repaired(text))
        case .reject: lines.append(.invalidUTF8)
        }
    }
}
