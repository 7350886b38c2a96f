import TestSupport
import Testing

@testable import XMPP

/// The session's timer table (issue 40: one timer task per connection instead of a task per timer).
@Suite("SessionTimers")
struct SessionTimersTests {
    typealias Timers = SessionTimers<ManualClock.Instant>
    let start = ManualClock().now

    func at(_ seconds: Int) -> ManualClock.Instant { self.start.advanced(by: .seconds(seconds)) }

    @Test func theTaskWakesOnlyForADeadlineEarlierThanTheOneItSleepsUntil() {
        var timers = Timers()
        let first = timers.arm(.watchdog, at: self.at(30))
        #expect(first, "nothing armed: the task waits for a first deadline")
        timers.setWake(at: timers.earliest)
        let later = timers.arm(.rooms, at: self.at(40))
        #expect(!later, "later: found when the task wakes at 30")
        let earlier = timers.arm(.acknowledgement, at: self.at(1))
        #expect(earlier, "earlier: the task must wake to sleep until it")
        #expect(timers.earliest == self.at(1))
    }

    @Test func dueTimersAreTakenEarliestFirstAndDisarmedTheRestStay() {
        var timers = Timers()
        _ = timers.arm(.rooms, at: self.at(5))
        _ = timers.arm(.requestExpiry, at: self.at(3))
        _ = timers.arm(.acknowledgement, at: self.at(5))
        _ = timers.arm(.watchdog, at: self.at(9))
        let none = timers.takeDue(now: self.at(2))
        #expect(none.isEmpty)
        let due = timers.takeDue(now: self.at(5))
        #expect(due == [.requestExpiry, .acknowledgement, .rooms], "equal deadlines keep the cases' order")
        #expect(timers.deadline(of: .rooms) == nil && timers.deadline(of: .watchdog) == self.at(9))
        #expect(timers.earliest == self.at(9))
    }

    @Test func reArmingReplacesAndCancellingOrTheConnectionsEndDisarms() {
        var timers = Timers()
        _ = timers.arm(.rooms, at: self.at(5))
        _ = timers.arm(.rooms, at: self.at(8))
        #expect(timers.deadline(of: .rooms) == self.at(8))
        timers.cancel(.rooms)
        let due = timers.takeDue(now: self.at(100))
        #expect(timers.isEmpty && due.isEmpty)
        _ = timers.arm(.watchdog, at: self.at(1))
        let first = timers.setWake(at: self.at(1))
        timers.removeAll()
        #expect(timers.isEmpty && timers.wakeAt == nil)
        let second = timers.setWake(at: self.at(2))
        #expect(second == first + 1, "a wake-up replaced finds its number stale")
    }
}
