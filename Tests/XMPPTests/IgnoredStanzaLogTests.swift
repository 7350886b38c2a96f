import Testing
import TestSupport

@testable import XMPP

/// A stranger flooding the session with stanzas it ignores costs a log line a window, and
/// the text they choose reaches the log escaped (issue 13, defect 8).
@Suite("IgnoredStanzaLog")
struct IgnoredStanzaLogTests {
    typealias Log = IgnoredStanzaLog<ManualClock.Instant>
    static let t0 = ManualClock.Instant()

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    @Test func aFloodGivesOneSummaryPerWindow() {
        var log = Log(window: .seconds(60))
        var summaries: [Log.Summary] = []
        // 10,000 ignored stanzas over 150 s.
        for index in 0..<10_000 {
            if let summary = log.ignored("reply to unknown request r\(index)", now: Self.at(index * 150 / 10_000)) { summaries.append(summary) }
        }
        #expect(summaries.count == 3)
        #expect(summaries.first == Log.Summary(count: 1, examples: ["reply to unknown request r0"]))
        // Every ignored stanza is counted in exactly one summary, but for the last window's, still open.
        #expect(summaries.dropFirst().allSatisfy { $0.examples.count == 3 })
        #expect(summaries.reduce(0) { $0 + $1.count } < 10_000)
        #expect(summaries.reduce(0) { $0 + $1.count } > 10_000 * 2 / 3)
    }

    @Test func aQuietSessionReportsEachRareEventAtOnce() {
        var log = Log(window: .seconds(60))
        #expect(log.ignored("forged carbon copy from mallory@evil.example", now: Self.at(0))?.count == 1)
        #expect(log.ignored("forged carbon copy from mallory@evil.example", now: Self.at(61))?.count == 1)
        #expect(log.ignored("forged carbon copy from mallory@evil.example", now: Self.at(200))?.count == 1)
    }

    @Test func peerTextIsEscapedAndShortened() {
        var log = Log()
        let hostile = "reply to \u{1B}[2J\u{1B}]0;pwned\u{07}\n2026-01-01 fake log line" + String(repeating: "A", count: 5_000)
        let summary = log.ignored(hostile, now: Self.at(0))
        let shown = summary?.examples.first ?? ""
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 })
        #expect(shown.hasPrefix("reply to \\u{1B}[2J"))
        #expect(shown.count <= 201)
        #expect(Log.describe(hostile) == shown)
    }
}
