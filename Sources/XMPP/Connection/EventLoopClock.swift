import NIOConcurrencyHelpers
import NIOCore

/// A clock whose sleeps and callbacks (``CallbackClock``) are timers of one NIO event loop
/// (`EventLoop.scheduleTask`).
///
/// It reads the same time as `ContinuousClock`; only the wake-up differs. A sleep on
/// `ContinuousClock` is a timer of Swift's global pool: arming it wakes a pool thread and
/// the dispatch manager, and firing it wakes both again before the sleeper's job is
/// enqueued back on the loop. A task that prefers the loop (``EventLoopTaskExecutor``)
/// and sleeps on this clock arms, cancels and fires on the loop's own thread: a timer
/// heap entry and, at most, a shorter `epoll_wait`. Sessions arm such timers several
/// times a second under a paced load (coalesced stream-management acknowledgements), so
/// this is the difference between a quiet and a busy process.
public struct EventLoopClock: CallbackClock {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    /// The loop whose timers this clock's sleeps and callbacks use.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public var now: Instant { ContinuousClock.now }

    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Returns at `deadline`, or throws `CancellationError` as soon as the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let delay = ContinuousClock.now.duration(to: deadline)
        guard delay > .zero else { return }
        let timer = SleepTimer()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let scheduled = self.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(delay))) {}
                scheduled.futureResult.whenComplete { result in
                    continuation.resume(with: result.mapError { _ in CancellationError() })
                }
                timer.armed(scheduled)
            }
        } onCancel: {
            timer.cancel()
        }
    }

    /// `callback` from a timer of the loop: a timer heap entry, no task.
    public func schedule(at deadline: Instant, _ callback: @escaping @Sendable () -> Void) -> ScheduledCallback {
        let delay = ContinuousClock.now.duration(to: deadline)
        let scheduled = self.eventLoop.scheduleTask(in: .nanoseconds(max(0, Self.nanoseconds(delay))), callback)
        return ScheduledCallback { scheduled.cancel() }
    }

    /// Whole nanoseconds of `duration`, saturating instead of trapping on a huge one.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? .max : total
    }
}

/// One sleep's scheduled task, cancellable from any thread, also before it is armed.
private final class SleepTimer: Sendable {
    private enum State {
        case waiting
        case armed(Scheduled<Void>)
        case cancelled
    }

    private let state = NIOLockedValueBox(State.waiting)

    func armed(_ scheduled: Scheduled<Void>) {
        let cancelled = self.state.withLockedValue { state -> Bool in
            guard case .waiting = state else { return true }
            state = .armed(scheduled)
            return false
        }
        if cancelled { scheduled.cancel() }
    }

    func cancel() {
        let scheduled = self.state.withLockedValue { state -> Scheduled<Void>? in
            defer { state = .cancelled }
            guard case .armed(let scheduled) = state else { return nil }
            return scheduled
        }
        scheduled?.cancel()
    }
}
