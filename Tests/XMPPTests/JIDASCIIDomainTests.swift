import Testing
import TestSupport

@testable import XMPP

/// The ASCII shortcut of domain preparation (issue 21) gives what the full path gives,
/// and leaves everything else to it.
@Suite("JID ASCII domain shortcut")
struct JIDASCIIDomainTests {
    static func full(_ text: String) -> String? {
        try? JIDPartPreparation.prepareDomainpartInFull(text.unicodeScalars)
    }

    @Test("canonical host names take the shortcut and prepare to themselves, as the full path says", arguments: [
        "example.com", "a.example", "muc.work.example", "x", "a-b.c-d.e", "1.example", "xn--bcher-kva.example", "123.abc",
        String(repeating: "a", count: 63) + ".example",
    ])
    func canonical(_ domain: String) {
        #expect(JIDPartPreparation.canonicalASCIIDomainpart(domain.unicodeScalars) == domain)
        #expect(Self.full(domain) == domain)
    }

    @Test("anything else goes the full path, which decides", arguments: [
        "Example.com", "example.com.", "-a.example", "a-.example", "a..example", ".example", "127.0.0.1", "[::1]", "",
        "bücher.example", "a_b.example", "a b", String(repeating: "a", count: 64) + ".example", "a:5222",
    ])
    func other(_ domain: String) {
        #expect(JIDPartPreparation.canonicalASCIIDomainpart(domain.unicodeScalars) == nil)
    }

    @Test("on 5,000 random names of letters, digits, hyphens and dots the shortcut never disagrees with the full path")
    func random() {
        var random = SplitMix64(state: 7)
        let alphabet = Array("abcz09-.A".unicodeScalars)
        for _ in 0..<5_000 {
            var text = String.UnicodeScalarView()
            for _ in 0..<(1 + Int(random.next() % 12)) { text.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let domain = String(text)
            if let short = JIDPartPreparation.canonicalASCIIDomainpart(domain.unicodeScalars) {
                #expect(Self.full(domain) == short, "\(domain)")
            }
        }
    }
}
