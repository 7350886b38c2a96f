import Foundation
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay

/// Floods and quiet hours (issue 24): the pure parts, then through the pipeline with the
/// manual clock: 500 lines to one phone with `max_per_minute = 20` give 20 messages and one
/// digest holding every other line; a quiet member gets non-urgent deliveries when the
/// hours end, across a restart.
@Suite("Flood limits and quiet hours")
struct PagingHoldTests {
    let folder = try! TemporaryFolder()
    static let alice = Endpoint(transport: "work", address: "alice@work.example")
    static let start = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 08:00 UTC, a Friday

    @Test("the gate lets `limit` a minute through, holds the rest until the minute ends, always passes priority 5, and starts a new minute after")
    func gate() {
        var gate = FloodGate()
        for second in 0..<20 { #expect(gate.admit(Self.alice, limit: 20, priority: 3, at: Self.start.addingTimeInterval(Double(second))) == nil) }
        #expect(gate.admit(Self.alice, limit: 20, priority: 3, at: Self.start.addingTimeInterval(30)) == Self.start.addingTimeInterval(60))
        #expect(gate.admit(Self.alice, limit: 20, priority: 5, at: Self.start.addingTimeInterval(31)) == nil)
        #expect(gate.admit(Endpoint(transport: "work", address: "bob@work.example"), limit: 20, priority: 3, at: Self.start.addingTimeInterval(31)) == nil)
        #expect(gate.admit(Self.alice, limit: 20, priority: 3, at: Self.start.addingTimeInterval(60)) == nil)
    }

    @Test("quiet hours cross midnight in their time zone, with daylight saving; urgent deliveries are never held")
    func quietHours() throws {
        let span = try #require(QuietHours.parse(hours: "22:00-07:00"))
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let quiet = QuietHours(start: span.start, end: span.end, timeZone: berlin, minimumPriority: 5)
        // 2027-01-15 08:00 UTC is 09:00 in Berlin (winter): not quiet.
        #expect(!quiet.isQuiet(at: Self.start))
        // 22:30 UTC is 23:30 in Berlin: quiet until 07:00 Berlin, 06:00 UTC.
        let night = Self.start.addingTimeInterval(14.5 * 3600)
        #expect(quiet.isQuiet(at: night))
        #expect(quiet.postponement(priority: 3, at: night) == Self.start.addingTimeInterval(22 * 3600))
        #expect(quiet.postponement(priority: 5, at: night) == nil)
        // Summer: 2027-07-01 05:30 UTC is 07:30 in Berlin (UTC+2): not quiet; 04:30 UTC is.
        let summer = Date(timeIntervalSince1970: 1_814_679_000)  // 2027-07-01 05:30 UTC
        #expect(!quiet.isQuiet(at: summer))
        #expect(quiet.isQuiet(at: summer.addingTimeInterval(-3600)))
        #expect(quiet.end(after: summer.addingTimeInterval(-3600)) == summer.addingTimeInterval(-1800))
        #expect(QuietHours.parse(hours: "09:00-17:30").map { [$0.start, $0.end] } == [540, 1050])
        for bad in ["22-07", "25:00-07:00", "22:00-22:00", "22:00", "22:00-07:00-08:00", "ab:cd-07:00"] { #expect(QuietHours.parse(hours: bad) == nil, "\(bad)") }
    }

    @Test("a digest counts its messages and shows the first lines before the file's link; its full text holds every line")
    func digest() {
        let bodies = (1...37).map { "line \($0)" }
        #expect(Digest.fullText(bodies) == "+37 more:\n" + bodies.joined(separator: "\n"))
        let summary = Digest.summary(bodies, url: "https://upload.example/digest.txt")
        #expect(summary == "+37 more: line 1\nline 2\nline 3\nline 4\nline 5\n… (32 more lines in the file)\nhttps://upload.example/digest.txt")
    }

    static func line(_ number: Int, priority: Int? = nil) -> InboundMessage {
        var message = InboundMessage(source: Endpoint(transport: "web"), sender: "web", nick: "web", id: "web-\(number)", body: String(format: "line %03d", number), channel: "ops")
        message.priority = priority
        return message
    }

    @Test("500 lines within 10 s, max_per_minute = 20: 20 go at once; at the minute's end one digest (split to fit, no upload service here) carries the other 480, every line once; priority 5 passes")
    func floodBecomesOneDigest() async throws {
        let clock = ManualClock()
        var policy = PagingPolicy()
        policy.maxPerMinute = 20
        let bridge = try await PagingTestPipeline.start(path: self.folder.path("state.sqlite"), clock: clock, channel: "ops", members: [Self.alice], policy: policy, format: "{body}")
        for number in 1...500 {
            if number % 50 == 0 { clock.advance(by: .seconds(1)) }
            #expect(await bridge.pipeline.handle(.message(Self.line(number)), from: "web") == .accepted)
        }
        #expect(await bridge.pipeline.handle(.message(Self.line(501, priority: 5)), from: "web") == .accepted)
        var bodies = try await bridge.queued(to: Self.alice)
        #expect(bodies.count == 21)
        #expect(bodies.last == "line 501")
        clock.advance(by: .seconds(50))
        let released = await eventually { (try? await bridge.queued(to: Self.alice).count) ?? 0 > 21 }
        #expect(released)
        bodies = try await bridge.queued(to: Self.alice)
        let digest = bodies.dropFirst(21).joined(separator: "\n")
        #expect(bodies.count == 22, "one digest: \(bodies.count - 21) parts")
        #expect(digest.hasPrefix("+480 more:\nline 021\n"))
        let lines = (bodies.prefix(21) + digest.split(separator: "\n").map(String.init)).filter { $0.hasPrefix("line ") }
        #expect(lines.sorted() == (1...501).map { String(format: "line %03d", $0) })
        #expect(try bridge.store.postponedDeliveries().isEmpty)
        await bridge.stop()
    }

    @Test("where the target cannot take a file, a flood's digest is split to the target's stanza limit: several messages, every line in them once")
    func floodDigestSplitWithoutUpload() async throws {
        let clock = ManualClock()
        var policy = PagingPolicy()
        policy.maxPerMinute = 5
        let bridge = try await PagingTestPipeline.start(
            path: self.folder.path("state.sqlite"), clock: clock, channel: "ops", members: [Self.alice], policy: policy, format: "{body}", stanzaLimits: ["work": 1_024]
        )
        for number in 1...200 {
            #expect(await bridge.pipeline.handle(.message(Self.line(number)), from: "web") == .accepted)
        }
        #expect(try await bridge.queued(to: Self.alice).count == 5)
        clock.advance(by: .seconds(61))
        // The digest's parts are queued in one commit.
        let released = await eventually { (try? await bridge.queued(to: Self.alice).count) ?? 0 > 5 }
        #expect(released, "the digest of 195 lines in parts of at most 1 KiB")
        let parts = try await bridge.queued(to: Self.alice).dropFirst(5)
        #expect(parts.count > 1, "split: \(parts.count) part(s)")
        #expect(parts.allSatisfy { $0.utf8.count < 1_024 }, "\(parts.map(\.utf8.count))")
        // Each part starts "(k/n) ".
        #expect(parts.enumerated().allSatisfy { $1.hasPrefix("(\($0 + 1)/\(parts.count)) ") }, "\(parts.map { $0.prefix(12) })")
        let unnumbered = parts.map { $0.drop { $0 != " " }.dropFirst() }
        let lines = unnumbered.flatMap { $0.split(separator: "\n").map(String.init) }.filter { $0.hasPrefix("line ") }
        #expect(lines == (6...200).map { String(format: "line %03d", $0) }, "every line once, in order")
        await bridge.stop()
    }

    @Test("in alice's quiet hours a non-urgent delivery waits, durably across a restart, until they end; an urgent one goes at once")
    func quietHoursHold() async throws {
        let clock = ManualClock()
        let path = self.folder.path("state.sqlite")
        var policy = PagingPolicy()
        // 08:00–09:00 UTC: the test starts at 08:00.
        policy.quiet[Self.alice] = QuietHours(start: 8 * 60, end: 9 * 60, timeZone: TimeZone(identifier: "UTC")!, minimumPriority: 5)
        do {
            let first = try await PagingTestPipeline.start(path: path, clock: clock, channel: "ops", members: [Self.alice], policy: policy, format: "{body}")
            #expect(await first.pipeline.handle(.message(Self.line(1)), from: "web") == .accepted)
            #expect(await first.pipeline.handle(.message(Self.line(2, priority: 5)), from: "web") == .accepted)
            #expect(try await first.queued(to: Self.alice) == ["line 002"])
            #expect(try first.store.postponedDeliveries().map(\.delivery.body) == ["line 001"])
            await first.stop()
        }
        let bridge = try await PagingTestPipeline.start(path: path, clock: clock, channel: "ops", members: [Self.alice], policy: policy, format: "{body}")
        clock.advance(by: .seconds(3599))
        #expect(try await bridge.queued(to: Self.alice).count == 1)
        clock.advance(by: .seconds(1))
        let released = await eventually { (try? await bridge.queued(to: Self.alice).count) == 2 }
        #expect(released)
        #expect(try await bridge.queued(to: Self.alice) == ["line 002", "line 001"])
        #expect(try bridge.store.postponedDeliveries().isEmpty)
        await bridge.stop()
    }
}
