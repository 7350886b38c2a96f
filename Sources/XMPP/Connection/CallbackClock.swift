/// A clock that calls a function at a deadline, with no task waiting for it.
///
/// A task asleep until a deadline keeps its stack of async frames and its first slab for as
/// long as it sleeps (docs/performance.md); an idle account's timers wait a minute at a
/// time, so on a clock like this the session's timers (``SessionTimers``) keep no task at
/// all: the clock calls back, and only then does a short task run what is due. A clock that
/// is not one (`ContinuousClock`, in the commands) gets a sleeping task instead.
public protocol CallbackClock<Instant>: Clock {
    /// Calls `callback` once at `deadline`, unless the returned handle is cancelled first.
    /// A deadline already passed may be met at once, on the caller's thread and before this
    /// returns (the manual clock does so): hold no lock `callback` takes. `callback` must not
    /// block: it runs on the clock's thread (the event loop's).
    func schedule(at deadline: Instant, _ callback: @escaping @Sendable () -> Void) -> ScheduledCallback
}
