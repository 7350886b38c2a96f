/// A clock that calls a function at a deadline, with no task waiting for it.
///
/// A task asleep until a deadline keeps its stack of async frames and its first slab for as
/// long as it sleeps (docs/performance.md); an idle account's timers wait a minute at a
/// time, so on a clock like this the session's timers (``SessionTimers``) keep no task at
/// all: the clock calls back, and only then does a short task run what is due. A clock that
/// is not one (`ContinuousClock`, in the commands) gets a sleeping task instead.
public protocol CallbackClock<Instant>: Clock {
    /// Calls `callback` once at `deadline`, or soon if it has passed, unless the returned
    /// handle is cancelled first. `callback` must not block: it runs on the clock's thread.
    func schedule(at deadline: Instant, _ callback: @escaping @Sendable () -> Void) -> ScheduledCallback
}

/// A callback a ``CallbackClock`` will call; cancelling it after the call does nothing.
public struct ScheduledCallback: Sendable {
    private let cancellation: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) {
        self.cancellation = cancel
    }

    /// The callback will not be called (unless it is being called already).
    public func cancel() {
        self.cancellation()
    }
}
