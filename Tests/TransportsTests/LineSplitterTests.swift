import Testing
import TransportCore

@testable import LocalTransport

/// Splitting local input into lines (bounded length, LF or CR LF, a decision on invalid
/// UTF-8) and cutting long text into message-sized pieces.
@Suite("LineSplitter and TextChunker")
struct LineSplitterTests {
    typealias Line = LineSplitter.Line

    /// Feeds `bytes` in chunks of `chunkSize` (all at once when nil), then finishes.
    static func split(
        _ bytes: [UInt8],
        chunkSize: Int? = nil,
        maxLineBytes: Int = 64 * 1024,
        invalidUTF8: LineSplitter.InvalidUTF8Policy = .replace,
        finish: Bool = true
    ) -> [Line] {
        var splitter = LineSplitter(maxLineBytes: maxLineBytes, invalidUTF8: invalidUTF8)
        var lines: [Line] = []
        let size = max(1, chunkSize ?? bytes.count)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + size, bytes.count)
            splitter.feed(bytes[offset..<end], into: &lines)
            offset = end
        }
        if finish { splitter.finish(into: &lines) }
        return lines
    }

    static func split(_ text: String, chunkSize: Int? = nil, maxLineBytes: Int = 64 * 1024, finish: Bool = true) -> [Line] {
        split(Array(text.utf8), chunkSize: chunkSize, maxLineBytes: maxLineBytes, finish: finish)
    }

    // MARK: - Lines

    @Test(
        "whole, in chunks, and byte by byte give the same lines",
        arguments: [
            ("one\ntwo\nthree\n", [Line.text("one"), .text("two"), .text("three")]),
            ("one\r\ntwo\r\nthree\r\n", [.text("one"), .text("two"), .text("three")]),
            ("mixed\r\nendings\nhere", [.text("mixed"), .text("endings"), .text("here")]),
            ("\n\n\n", [.text(""), .text(""), .text("")]),
            ("a\n\nb\r\n\r\nc", [.text("a"), .text(""), .text("b"), .text(""), .text("c")]),
            ("héllo 漢字 👩‍👩‍👧‍👦\nمرحبا\n", [.text("héllo 漢字 👩‍👩‍👧‍👦"), .text("مرحبا")]),
            ("lone\rcarriage return\n", [.text("lone\rcarriage return")]),
            ("", []),
        ] as [(String, [Line])]
    )
    func chunkingDoesNotMatter(input: String, expected: [Line]) {
        let whole = Self.split(input)
        #expect(whole == expected)
        for chunkSize in [1, 2, 3, 5, 7] {
            #expect(Self.split(input, chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test("LF and CR LF give the same text")
    func lfAndCRLF() {
        #expect(Self.split("alpha\nbeta\n") == Self.split("alpha\r\nbeta\r\n"))
        #expect(Self.split("alpha\r\n") == [.text("alpha")])
    }

    @Test("a CR LF split between two feeds is still one line ending")
    func crlfAcrossFeeds() {
        var splitter = LineSplitter()
        var lines: [Line] = []
        splitter.feed(Array("first\r".utf8), into: &lines)
        #expect(lines == [])
        splitter.feed(Array("\nsecond\r".utf8), into: &lines)
        #expect(lines == [.text("first")])
        splitter.feed(Array("\n".utf8), into: &lines)
        #expect(lines == [.text("first"), .text("second")])
    }

    @Test("the last line without a newline comes out only with finish()")
    func lastLineNeedsFinish() {
        #expect(Self.split("one\ntwo", finish: false) == [.text("one")])
        #expect(Self.split("one\ntwo") == [.text("one"), .text("two")])

        var splitter = LineSplitter()
        var lines: [Line] = []
        splitter.feed(Array("tail".utf8), into: &lines)
        #expect(lines == [])
        splitter.finish(into: &lines)
        #expect(lines == [.text("tail")])
        // Nothing pending: finish adds nothing, however often it is called.
        splitter.finish(into: &lines)
        #expect(lines == [.text("tail")])
    }

    @Test("finish() after a trailing newline adds no empty line")
    func finishAfterNewline() {
        #expect(Self.split("one\n") == [.text("one")])
        #expect(Self.split("one\n\n") == [.text("one"), .text("")])
    }

    @Test(
        "a line over maxLineBytes → tooLong with its exact length; the next line is intact",
        arguments: [1, 2, 3, 4, 7, 64]
    )
    func tooLong(chunkSize: Int) {
        let input = "short\n" + String(repeating: "x", count: 23) + "\nafter\n"
        #expect(
            Self.split(input, chunkSize: chunkSize, maxLineBytes: 10)
                == [.text("short"), .tooLong(bytes: 23), .text("after")]
        )
    }

    @Test("the limit is inclusive: maxLineBytes bytes pass, one more is too long")
    func limitBoundary() {
        #expect(Self.split("0123456789\n", maxLineBytes: 10) == [.text("0123456789")])
        #expect(Self.split("0123456789A\n", maxLineBytes: 10) == [.tooLong(bytes: 11)])
        #expect(Self.split("0123456789A", maxLineBytes: 10) == [.tooLong(bytes: 11)])
        // Counted in bytes, not characters: five 3-byte characters are 15 bytes.
        #expect(Self.split("漢字漢字漢\n", maxLineBytes: 14) == [.tooLong(bytes: 15)])
        #expect(Self.split("漢字漢字漢\n", maxLineBytes: 15) == [.text("漢字漢字漢")])
    }

    @Test(
        "the CR of a CR LF ending does not count towards the limit"
    )
    func crlfAtLimit() {
        #expect(Self.split("0123456789\r\n", maxLineBytes: 10) == [.text("0123456789")])
        #expect(Self.split("0123456789A\r\n", maxLineBytes: 10) == [.tooLong(bytes: 11)])
    }

    @Test("a too-long line at end of input is reported by finish()")
    func tooLongAtEnd() {
        #expect(Self.split("ok\nabcdefghijkl", maxLineBytes: 5, finish: false) == [.text("ok")])
        #expect(Self.split("ok\nabcdefghijkl", maxLineBytes: 5) == [.text("ok"), .tooLong(bytes: 12)])
    }

    @Test("two too-long lines in a row are each reported")
    func twoTooLong() {
        #expect(Self.split("aaaaaaa\nbbbbbbbbb\nc\n", maxLineBytes: 3) == [.tooLong(bytes: 7), .tooLong(bytes: 9), .text("c")])
    }

    @Test("maxLineBytes below 1 is treated as 1")
    func minimumLimit() {
        let splitter = LineSplitter(maxLineBytes: 0)
        #expect(splitter.maxLineBytes == 1)
        #expect(Self.split("a\nbb\n", maxLineBytes: 0) == [.text("a"), .tooLong(bytes: 2)])
    }

    // MARK: - UTF-8

    @Test(
        "invalid UTF-8 is replaced with U+FFFD under .replace",
        arguments: [
            ([0xC3, 0x28], "\u{FFFD}("),
            ([0xFF], "\u{FFFD}"),
            ([0x61, 0xFE, 0x62], "a\u{FFFD}b"),
            ([0xE6, 0xBC], "\u{FFFD}"),
            ([0xC0, 0xAF], "\u{FFFD}\u{FFFD}"),
            ([0xED, 0xA0, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}"),
        ] as [([UInt8], String)]
    )
    func invalidReplaced(bytes: [UInt8], expected: String) {
        let input = bytes + Array("\nnext\n".utf8)
        #expect(Self.split(input, invalidUTF8: .replace) == [.repaired(expected), .text("next")])
        #expect(Self.split(input, chunkSize: 1, invalidUTF8: .replace) == [.repaired(expected), .text("next")])
    }

    @Test(
        "invalid UTF-8 is reported under .reject and the next line is intact",
        arguments: [[0xC3, 0x28], [0xFF], [0x61, 0xFE, 0x62], [0xE6, 0xBC], [0xC0, 0xAF], [0xED, 0xA0, 0x80]] as [[UInt8]]
    )
    func invalidRejected(bytes: [UInt8]) {
        let input = Array("before\n".utf8) + bytes + Array("\r\nnext\n".utf8)
        #expect(Self.split(input, invalidUTF8: .reject) == [.text("before"), .invalidUTF8, .text("next")])
        #expect(Self.split(input, chunkSize: 1, invalidUTF8: .reject) == [.text("before"), .invalidUTF8, .text("next")])
    }

    @Test("valid UTF-8 passes under .reject, including U+FFFD itself")
    func validUnderReject() {
        let input = "ok 漢字 👍 \u{FFFD}\n"
        #expect(Self.split(Array(input.utf8), invalidUTF8: .reject) == [.text("ok 漢字 👍 \u{FFFD}")])
    }

    @Test("a multi-byte character split across feeds arrives intact", arguments: ["é", "漢", "😀", "👩‍👩‍👧‍👦"])
    func characterAcrossFeeds(character: String) {
        let bytes = Array(("a" + character + "b\n").utf8)
        for cut in 1..<(bytes.count - 1) {
            for policy in LineSplitter.InvalidUTF8Policy.allCases {
                var splitter = LineSplitter(invalidUTF8: policy)
                var lines: [Line] = []
                splitter.feed(bytes[..<cut], into: &lines)
                splitter.feed(bytes[cut...], into: &lines)
                #expect(lines == [.text("a" + character + "b")], "cut at \(cut), \(policy)")
            }
        }
    }

    // MARK: - TextChunker

    @Test("input of at most maxBytes is one piece, unchanged", arguments: ["", "short", "exactly10!", "漢字漢", "a\nb\nc"])
    func chunkerSmallInput(text: String) {
        #expect(TextChunker.split(text, maxBytes: 10) == [text])
    }

    @Test("lines are packed into pieces of at most maxBytes, cut only at line ends")
    func chunkerPacksLines() {
        let text = "aaa\nbbb\nccc\ndd\ne"
        let pieces = TextChunker.split(text, maxBytes: 7)
        #expect(pieces == ["aaa\nbbb", "ccc\ndd", "e"])
        #expect(pieces.joined(separator: "\n") == text)
        #expect(pieces.allSatisfy { $0.utf8.count <= 7 })
    }

    @Test(
        "pieces are at most maxBytes, and joined with newlines they give back the input",
        arguments: [
            ("line one\nline two\nline three\nfour\nfive five", 12),
            ("漢字漢字\nかなカナ\n한국어\n😀😀\nend", 13),
            (String(repeating: "word\n", count: 40) + "last", 16),
            ("α\nβ\nγ\nδ\nε\nζ", 5),
        ] as [(String, Int)]
    )
    func chunkerRoundTrip(text: String, maxBytes: Int) {
        let pieces = TextChunker.split(text, maxBytes: maxBytes)
        #expect(pieces.count > 1)
        #expect(pieces.allSatisfy { $0.utf8.count <= maxBytes }, "\(pieces.map { $0.utf8.count })")
        #expect(pieces.joined(separator: "\n") == text)
        #expect(!pieces.contains(""))
    }

    @Test(
        "empty lines and a trailing newline survive splitting",
        arguments: [
            ("para one is long\n\npara two", 16),
            ("a\n\n\nb", 2),
            ("abc\n\n\ndef", 4),
            ("abc\n", 3),
        ] as [(String, Int)]
    )
    func chunkerKeepsEmptyLines(text: String, maxBytes: Int) {
        let pieces = TextChunker.split(text, maxBytes: maxBytes)
        #expect(pieces.joined(separator: "\n") == text, "\(pieces)")
        #expect(pieces.allSatisfy { $0.utf8.count <= maxBytes })
    }

    @Test("an empty line inside a piece is kept")
    func chunkerEmptyLineInsidePiece() {
        let pieces = TextChunker.split("abc\n\ndef", maxBytes: 4)
        #expect(pieces == ["abc\n", "def"])
        #expect(pieces.joined(separator: "\n") == "abc\n\ndef")
    }

    @Test(
        "a single line longer than maxBytes is cut at character boundaries",
        arguments: [
            ("漢字漢字漢", 7, ["漢字", "漢字", "漢"]),
            ("漢字漢字漢", 6, ["漢字", "漢字", "漢"]),
            ("😀😀😀", 5, ["😀", "😀", "😀"]),
            ("😀😀😀", 8, ["😀😀", "😀"]),
            ("ab😀cd😀", 5, ["ab", "😀c", "d😀"]),
            ("abcdefghij", 3, ["abc", "def", "ghi", "j"]),
            ("👍🏽👍🏽", 9, ["👍🏽", "👍🏽"]),
        ] as [(String, Int, [String])]
    )
    func chunkerCutsLongLine(text: String, maxBytes: Int, expected: [String]) {
        let pieces = TextChunker.split(text, maxBytes: maxBytes)
        #expect(pieces == expected)
        #expect(pieces.joined() == text)
        #expect(pieces.allSatisfy { $0.utf8.count <= maxBytes })
    }

    @Test("a long line between short ones: the short ones keep their line breaks, the long one is cut")
    func chunkerLongLineAmongShort() {
        let text = "hi\n" + String(repeating: "漢", count: 5) + "\nbye"
        let pieces = TextChunker.split(text, maxBytes: 6)
        #expect(pieces == ["hi", "漢漢", "漢漢", "漢", "bye"])
        #expect(pieces.allSatisfy { $0.utf8.count <= 6 })
        // The long line's pieces concatenate to it; the line ends are where they were.
        #expect(pieces[1...3].joined() == String(repeating: "漢", count: 5))
    }

    @Test(
        "a character (grapheme cluster) longer than maxBytes still yields pieces of at most maxBytes"
    )
    func chunkerHugeGrapheme() {
        let zalgo = "e" + String(repeating: "\u{0301}", count: 20)  // one Character, 41 bytes
        #expect(zalgo.count == 1)
        let pieces = TextChunker.split(zalgo, maxBytes: 16)
        #expect(pieces.allSatisfy { $0.utf8.count <= 16 }, "\(pieces.map { $0.utf8.count })")
        #expect(pieces.joined() == zalgo)
    }
}
