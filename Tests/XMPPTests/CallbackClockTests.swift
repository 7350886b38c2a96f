import NIOConcurrencyHelpers
import NIOEmbedded
import TestSupport
import Testing

@testable import XMPP

/// The clocks that call back at a deadline (``CallbackClock``): the event loop's, which the
/// daemon's session timers use, and the manual one the session tests use.
@Suite("CallbackClock")
struct CallbackClockTests {
    /// Counts calls, from whichever thread makes them.
    final class Calls: Sendable {
        private let count = NIOLockedValueBox(0)
        var value: Int { self.count.withLockedValue { $0 } }
        func called() { self.count.withLockedValue { $0 += 1 } }
    }

    @Test("the event loop's clock calls back once at the deadline, not before, and not at all once cancelled")
    func eventLoopClock() {
        let loop = EmbeddedEventLoop()
        let clock = EventLoopClock(loop)
        let (kept, cancelled) = (Calls(), Calls())
        _ = clock.schedule(at: clock.now.advanced(by: .seconds(5))) { kept.called() }
        let scheduled = clock.schedule(at: clock.now.advanced(by: .seconds(5))) { cancelled.called() }
        scheduled.cancel()
        loop.advanceTime(by: .seconds(4))
        #expect(kept.value == 0)
        loop.advanceTime(by: .seconds(2))
        loop.advanceTime(by: .seconds(60))
        #expect(kept.value == 1 && cancelled.value == 0)
        // A deadline already passed: called at the loop's next turn.
        let late = Calls()
        _ = clock.schedule(at: clock.now.advanced(by: .seconds(-1))) { late.called() }
        loop.run()
        #expect(late.value == 1)
    }

    @Test("the manual clock calls back when time reaches the deadline, counts the callback as a sleeper, and forgets a cancelled one")
    func manualClock() {
        let clock = ManualClock()
        let (kept, cancelled) = (Calls(), Calls())
        _ = clock.schedule(at: clock.now.advanced(by: .seconds(5))) { kept.called() }
        let scheduled = clock.schedule(at: clock.now.advanced(by: .seconds(3))) { cancelled.called() }
        #expect(clock.sleeperCount == 2 && clock.earliestDeadline == clock.now.advanced(by: .seconds(3)))
        scheduled.cancel()
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(4))
        #expect(kept.value == 0 && cancelled.value == 0)
        clock.advance(by: .seconds(1))
        #expect(kept.value == 1 && clock.sleeperCount == 0)
        let now = Calls()
        _ = clock.schedule(at: clock.now) { now.called() }
        #expect(now.value == 1, "a deadline reached already: called at once")
    }
}
