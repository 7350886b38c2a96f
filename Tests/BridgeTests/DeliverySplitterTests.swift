import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay

/// Poison messages (issue 8): a delivery whose escaped stanza exceeds the target's limit is
/// split into parts that each fit, in order, losing nothing.
@Suite("DeliverySplitter")
struct DeliverySplitterTests {
    static func delivery(_ body: String) -> Delivery {
        Delivery(
            sequence: 7, channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: body, originalBody: body,
            nick: "cron", subject: "Report", type: .chat, source: Endpoint(transport: "pipe"), sourceID: "s-1", relayID: "r-1"
        )
    }

    /// The text of the parts without their "(k/n) " prefixes.
    static func joined(_ parts: [Delivery]) -> String {
        parts.map { part in String(part.body[part.body.index(after: part.body.firstIndex(of: " ")!)...]) }.joined()
    }

    @Test("a body that fits is left alone")
    func fits() {
        let delivery = Self.delivery("backup ok <&>")
        #expect(DeliverySplitter.split(delivery, maxStanzaBytes: 65_536) == [delivery])
    }

    @Test("64 KiB of '&' (320 KiB escaped) becomes parts within a 64 KiB limit, nothing lost")
    func ampersands() {
        let body = String(repeating: "&", count: 64 * 1024)
        let parts = DeliverySplitter.split(Self.delivery(body), maxStanzaBytes: 65_536)
        #expect(parts.count == 6)
        for part in parts {
            #expect(DeliverySplitter.escapedSize(part.body) + DeliverySplitter.envelopeBytes <= 65_536)
        }
        #expect(Self.joined(parts) == body)
        #expect(parts.map(\.relayID) == (1...6).map { "r-1-\($0)" })
        #expect(parts.first?.body.hasPrefix("(1/6) ") == true)
        #expect(parts.first?.subject == "Report")
        #expect(parts.dropFirst().allSatisfy { $0.subject == nil })
    }

    @Test("parts break at line ends when lines fit")
    func lineBoundaries() {
        let line = String(repeating: "a", count: 999) + "\n"
        let body = String(repeating: line, count: 100)
        let parts = DeliverySplitter.split(Self.delivery(body), maxStanzaBytes: 10_000)
        #expect(parts.count > 1)
        #expect(Self.joined(parts) == body)
        for part in parts.dropLast() { #expect(part.body.hasSuffix("\n")) }
    }

    @Test("emoji, CJK and combining marks are never cut apart")
    func characters() {
        let body = String(repeating: "😀中e\u{301}<", count: 20_000)
        let parts = DeliverySplitter.split(Self.delivery(body), maxStanzaBytes: 8_192)
        #expect(Self.joined(parts) == body)
        for part in parts {
            #expect(DeliverySplitter.escapedSize(part.body) + DeliverySplitter.envelopeBytes <= 8_192)
        }
    }

    @Test("escaped sizes follow the serializer")
    func escapedSizes() {
        #expect(DeliverySplitter.escapedSize("&") == 5)
        #expect(DeliverySplitter.escapedSize("<>") == 8)
        #expect(DeliverySplitter.escapedSize("\r") == 5)
        #expect(DeliverySplitter.escapedSize("\u{1}") == 0)
        #expect(DeliverySplitter.escapedSize("é") == 2)
    }
}
