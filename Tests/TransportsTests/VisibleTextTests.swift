import Testing
import TransportCore
import XMPP

@testable import LocalTransport

/// Remote text on a terminal (issue 13, defect 9): no control character gets through.
@Suite("VisibleText and text output lines")
struct VisibleTextTests {
    static func delivery(nick: String, body: String) -> Delivery {
        Delivery(
            channel: "ops", target: Endpoint(transport: "console", address: nil), body: body, originalBody: body, nick: nick,
            type: .chat, source: Endpoint(transport: "work", address: "mallory@example.test"), sourceID: "s1", relayID: "r1"
        )
    }

    @Test func everyControlCharacterIsEscaped() {
        #expect(VisibleText.escaped("\u{1B}[2J\u{1B}]0;owned\u{07}") == "\\u{1B}[2J\\u{1B}]0;owned\\u{7}")
        #expect(VisibleText.escaped("a\rb") == "a\\rb")
        #expect(VisibleText.escaped("a\nb") == "a\\nb")
        #expect(VisibleText.escaped("\u{00}\u{7F}\u{9B}") == "\\u{0}\\u{7F}\\u{9B}")
        for value in UInt32(0)...0x9F where value != 0x09 && (value < 0x20 || value >= 0x7F) {
            let escaped = VisibleText.escaped(String(Unicode.Scalar(value)!))
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "U+\(String(value, radix: 16))")
        }
    }

    @Test func ordinaryTextIsUnchanged() {
        for text in ["plain", "tab\tseparated", "<&>\"'", "emoji 🎉 and CJK 漢字", "é combining e\u{301}", ""] {
            #expect(VisibleText.escaped(text) == text)
        }
    }

    @Test func stdoutTextLinesCarryNoControlCharacters() {
        let line = LocalOutputLine.render(Self.delivery(nick: "mal\u{1B}[31mlory", body: "one\ntwo\r\u{1B}[Kfake: line"), as: .text)
        #expect(line == "mal\\u{1B}[31mlory: one ⏎ two\\r\\u{1B}[Kfake: line")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" })
    }
}
