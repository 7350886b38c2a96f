import TestServers
import Testing

/// The test servers' archive reader (what tells a message Prosody lost from one the bridge
/// lost), on the bytes Prosody 0.12's `util.serialization` writes.
@Suite("ProsodyArchiveFile")
struct ProsodyArchiveFileTests {
    @Test("string literals decoded: decimal escapes of UTF-8 bytes, C escapes, quotes; a cut file keeps what came before")
    func strings() {
        let file = #"item({["key"]="k1";["attr"]={["to"]="bob@example.test";};[1]={["name"]="body";[1]="a\226\134\146b 0001";};});"#
            + "\n" + #"item({[1]={["name"]="body";[1]="say \"hi\"\n\\ \0";};});"# + "\n" + #"item({[1]="cut"#
        let strings = ProsodyArchiveFile.strings(in: Array(file.utf8))
        #expect(strings.contains("a→b 0001"))
        #expect(strings.contains("say \"hi\"\n\\ \u{0}"))
        #expect(strings.contains("bob@example.test"))
        #expect(!strings.contains("a→b 0002"))
        #expect(strings.contains("cut"))
    }
}
