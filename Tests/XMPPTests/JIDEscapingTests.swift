import Testing

@testable import XMPP

/// XEP-0106 escaping, as gateways use it for puppet localparts.
@Suite("JIDEscaping")
struct JIDEscapingTests {
    @Test("each of the ten characters is escaped, and back", arguments: [
        (" ", "\\20"), ("\"", "\\22"), ("&", "\\26"), ("'", "\\27"), ("/", "\\2f"), (":", "\\3a"), ("<", "\\3c"), (">", "\\3e"), ("@", "\\40"),
    ])
    func eachCharacter(character: String, escaped: String) {
        #expect(JIDEscaping.escape("a\(character)b") == "a\(escaped)b")
        #expect(JIDEscaping.unescape("a\(escaped)b") == "a\(character)b")
    }

    @Test("XEP-0106's examples: space and @ in a localpart; a backslash escaped only before an escape sequence")
    func examples() {
        #expect(JIDEscaping.escape("bob@home.example") == "bob\\40home.example")
        #expect(JIDEscaping.escape("d'artagnan") == "d\\27artagnan")
        #expect(JIDEscaping.escape("space cadet") == "space\\20cadet")
        #expect(JIDEscaping.escape("a\\b") == "a\\b", "\\b is no escape sequence")
        #expect(JIDEscaping.escape("c\\20d@x") == "c\\5c20d\\40x", "an already escaped space keeps its backslash")
        #expect(JIDEscaping.escape("c:\\5commas") == "c\\3a\\5c5commas")
    }

    @Test("round trips, including the tricky ones", arguments: ["bob@home.example", "a\\b@x.example", "c\\20d@x.example", "\\5c@x", "trailing\\", "ü 漢字 😀@x", "\\", "@@"])
    func roundTrip(text: String) {
        #expect(JIDEscaping.unescape(JIDEscaping.escape(text)) == text)
    }

    @Test("unknown sequences and a lone backslash are left as they are; upper-case codes read too")
    func lenientUnescape() {
        #expect(JIDEscaping.unescape("a\\zzb") == "a\\zzb")
        #expect(JIDEscaping.unescape("end\\") == "end\\")
        #expect(JIDEscaping.unescape("a\\2Fb") == "a/b")
    }
}
