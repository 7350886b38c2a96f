import TestSupport
import Testing

@testable import XMPP

/// Connection warnings when thousands of accounts fail at once: a few as they come, the
/// rest summed up once per window, driven by a manual clock.
@Suite("ConnectionNoticeThrottle")
struct ConnectionNoticeThrottleTests {
    typealias Throttle = ConnectionNoticeThrottle<ManualClock.Instant>

    @Test("a server restart under 10,000 accounts: 5 lines and one summary per window, naming the commonest reason")
    func restartStorm() {
        var throttle = Throttle(configuration: .init(interval: .seconds(10), burst: 5))
        var start = ManualClock.Instant()
        var logged = 0
        var summaries: [Throttle.Summary] = []
        for account in 0..<10_000 {
            let now = start.advanced(by: .milliseconds(2 * account))  // 20 s of failures: two windows
            for kind in [Throttle.Kind.offline, .connectionFailed] {
                let (decision, summary) = throttle.notice(kind, account: "a\(account)", reason: account % 10 == 0 ? "refused" : "closed", at: now)
                if decision == .log { logged += 1 }
                if let summary { summaries.append(summary) }
            }
        }
        start = start.advanced(by: .seconds(40))
        if let last = throttle.settled(at: start) { summaries.append(last) }
        #expect(logged == 10, "5 in each of the two windows the storm spans")
        #expect(summaries.count == 2)
        #expect(summaries.map(\.total).reduce(0, +) + logged == 20_000, "every notice is logged or counted")
        #expect(summaries.allSatisfy { $0.commonestReason == "closed" })
        #expect(summaries[0].description.contains("\"connection failed; retrying\"") && summaries[0].description.contains("most often: closed"))
    }

    @Test("two accounts: every notice is logged as it comes, nothing is summed up")
    func fewAccounts() {
        var throttle = Throttle()
        let now = ManualClock.Instant()
        for account in ["home", "work"] {
            #expect(throttle.notice(.offline, account: account, reason: nil, at: now) == (.log, nil))
            #expect(throttle.notice(.connectionFailed, account: account, reason: nil, at: now) == (.log, nil))
        }
        #expect(throttle.settled(at: now.advanced(by: .seconds(60))) == nil)
    }

    @Test("a window ends only after its interval: a login inside it sums nothing up")
    func windowBoundary() {
        var throttle = Throttle(configuration: .init(interval: .seconds(10), burst: 0))
        let start = ManualClock.Instant()
        #expect(throttle.notice(.offline, account: "a", reason: "x", at: start).0 == .hold)
        #expect(throttle.settled(at: start.advanced(by: .seconds(9))) == nil)
        let summary = throttle.settled(at: start.advanced(by: .seconds(10)))
        #expect(summary?.total == 1 && summary?.accounts == 1)
        #expect(throttle.settled(at: start.advanced(by: .seconds(30))) == nil, "said once")
    }

    @Test("the notices of all accounts through one throttle: the held ones are counted per account, the summary goes to the shared logger")
    func sharedNotices() throws {
        let clock = ManualClock()
        let recorder = LogRecorder()
        let notices = ConnectionNotices(configuration: .init(interval: .seconds(10), burst: 2), clock: clock, logger: recorder.logger("notices"))
        let accounts = try (0..<5).map { try JID("a\($0)@example.test") }
        for account in accounts {
            let logger = recorder.logger("session")
            notices.notice(.connectionFailed, account: account, reason: "refused", metadata: [:], logger: logger)
            notices.notice(.offline, account: try account.withResource("r"), reason: "refused", metadata: [:], logger: logger)
        }
        #expect(recorder.messages.filter { $0.hasPrefix("connection failed") || $0 == "offline" }.count == 2)
        clock.advance(by: .seconds(10))
        notices.settled()
        let summary = try #require(recorder.messages.last)
        #expect(summary.hasPrefix("8 connection notices of 4 accounts held back"), "\(summary)")
    }
}
