import TestSupport

@testable import XMPP

/// The manual clock calls back as the event loop's clock does, so the session's timers
/// run here as in the daemon: by the clock's callback, with no task asleep
/// (``CallbackClock``). The other way, a task asleep on the clock, runs in the integration
/// tests' sessions (on `ContinuousClock`) and in ``SessionTimersSleepingTaskTests``.
extension ManualClock: CallbackClock {
    public func schedule(at deadline: Instant, _ callback: @escaping @Sendable () -> Void) -> ScheduledCallback {
        ScheduledCallback(cancel: self.callBack(at: deadline, callback))
    }
}
