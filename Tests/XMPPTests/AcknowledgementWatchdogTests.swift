import TestSupport
import Testing

@testable import XMPP

/// Dead links found by unanswered `<r/>`s (issue 22), with instants of the manual clock.
@Suite("AcknowledgementWatchdog")
struct AcknowledgementWatchdogTests {
    typealias Instant = ManualClock.Instant
    static func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    @Test func nothingAskedIsNothingOwed() {
        let watchdog = AcknowledgementWatchdog<Instant>(timeout: .seconds(5))
        #expect(watchdog.deadline == nil)
        #expect(watchdog.check(now: Self.at(60_000)) == .idle)
    }

    @Test func anUnansweredRequestIsDeadAfterTheTimeout() {
        var watchdog = AcknowledgementWatchdog<Instant>(timeout: .seconds(5))
        let started = watchdog.requested(now: Self.at(1_000))
        #expect(started, "the first request starts the wait")
        let moved = watchdog.requested(now: Self.at(2_000))
        #expect(!moved, "a second one does not move it")
        #expect(watchdog.check(now: Self.at(5_999)) == .wait(until: Self.at(6_000)))
        #expect(watchdog.check(now: Self.at(6_000)) == .dead(resumedUnacknowledged: false))
    }

    @Test func eachAnswerRestartsTheWaitForTheRequestsStillUnanswered() {
        var watchdog = AcknowledgementWatchdog<Instant>(timeout: .seconds(5))
        watchdog.requested(now: Self.at(0))
        watchdog.requested(now: Self.at(100))
        watchdog.acknowledged(now: Self.at(4_000))
        #expect(watchdog.check(now: Self.at(6_000)) == .wait(until: Self.at(9_000)), "one request is still unanswered")
        watchdog.acknowledged(now: Self.at(4_500))
        #expect(watchdog.check(now: Self.at(60_000)) == .idle)
        watchdog.acknowledged(now: Self.at(4_600))
        #expect(watchdog.unanswered == 0, "an unrequested answer never makes a debt")
    }

    @Test func aResumedStreamThatNeverAnswersIsNotResumedAgain() {
        var watchdog = AcknowledgementWatchdog<Instant>(timeout: .seconds(5))
        watchdog.resumed()
        watchdog.requested(now: Self.at(0))
        #expect(watchdog.check(now: Self.at(5_000)) == .dead(resumedUnacknowledged: true))
        watchdog.acknowledged(now: Self.at(5_001))
        watchdog.requested(now: Self.at(6_000))
        #expect(watchdog.check(now: Self.at(11_000)) == .dead(resumedUnacknowledged: false), "once answered, the stream is an ordinary one")
    }

    @Test func aNewConnectionOwesNothing() {
        var watchdog = AcknowledgementWatchdog<Instant>(timeout: .seconds(5))
        watchdog.resumed()
        watchdog.requested(now: Self.at(0))
        watchdog.connectionEnded()
        #expect(watchdog.check(now: Self.at(10_000)) == .idle)
        #expect(!watchdog.resumedUnacknowledged && watchdog.unanswered == 0)
    }
}
