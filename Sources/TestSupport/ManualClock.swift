import Foundation

/// A clock that only moves when a test calls ``advance(by:)``, for time-dependent
/// code generic over `Clock`.
///
/// Sleepers whose deadline has been reached are resumed by ``advance(by:)``; a
/// sleeper whose task is cancelled throws `CancellationError`.
public final class ManualClock: Clock, @unchecked Sendable {
    /// A point on the manual time line: an offset from the clock's origin.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        public var offset: Duration

        public init(offset: Duration = .zero) {
            self.offset = offset
        }

        public static func + (instant: Instant, duration: Duration) -> Instant {
            instant.advanced(by: duration)
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: self.offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - self.offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        public var description: String { "t+\(self.offset)" }
    }

    private struct Sleeper {
        /// A task asleep, or a callback scheduled (``callBack(at:_:)``).
        enum Wake {
            case task(CheckedContinuation<Void, any Error>)
            case callback(@Sendable () -> Void)
        }

        var deadline: Instant
        var wake: Wake

        func resume() {
            switch self.wake {
            case .task(let continuation): continuation.resume()
            case .callback(let callback): callback()
            }
        }
    }

    /// Guards everything below.
    private let lock = NSLock()
    private var current: Instant
    private var sleepers: [UInt64: Sleeper] = [:]
    private var nextSleeperID: UInt64 = 0

    public init(now: Instant = Instant()) {
        self.current = now
    }

    public var now: Instant {
        self.lock.withLock { self.current }
    }

    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock, and callbacks are scheduled, so a test
    /// can wait until one is.
    public var sleeperCount: Int {
        self.lock.withLock { self.sleepers.count }
    }

    /// The earliest deadline a task sleeps or a callback is scheduled until; nil when none.
    public var earliestDeadline: Instant? {
        self.lock.withLock { self.sleepers.values.map(\.deadline).min() }
    }

    /// Moves time forward and resumes, earliest first, every sleeper whose deadline is
    /// reached, and calls every callback due.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = self.lock.withLock {
            self.current = self.current.advanced(by: duration)
            let now = self.current
            let dueIDs = self.sleepers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }.map(\.key)
            return dueIDs.compactMap { self.sleepers.removeValue(forKey: $0) }
        }
        for sleeper in due {
            sleeper.resume()
        }
    }

    /// Moves time forward to `instant` (no-op when it is not in the future).
    public func advance(to instant: Instant) {
        let delta = self.now.duration(to: instant)
        if delta > .zero { self.advance(by: delta) }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = self.lock.withLock {
            defer { self.nextSleeperID += 1 }
            return self.nextSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock: cancellation sets the flag before running the handler,
                // and the handler takes the lock, so exactly one of the two resumes.
                enum Outcome { case cancelled, due, sleeping }
                let outcome: Outcome = self.lock.withLock {
                    if Task.isCancelled { return .cancelled }
                    if deadline <= self.current { return .due }
                    self.sleepers[id] = Sleeper(deadline: deadline, wake: .task(continuation))
                    return .sleeping
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .due: continuation.resume()
                case .sleeping: break
                }
            }
        } onCancel: {
            let sleeper = self.lock.withLock { self.sleepers.removeValue(forKey: id) }
            if case .task(let continuation) = sleeper?.wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Calls `callback` when ``advance(by:)`` reaches `deadline` (now, if it has), unless
    /// the returned function, which cancels it, is called first. What a clock that calls
    /// back at a deadline offers (the XMPP module's `CallbackClock`, which test targets
    /// conform this clock to).
    public func callBack(at deadline: Instant, _ callback: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let id: UInt64? = self.lock.withLock {
            guard deadline > self.current else { return nil }
            defer { self.nextSleeperID += 1 }
            self.sleepers[self.nextSleeperID] = Sleeper(deadline: deadline, wake: .callback(callback))
            return self.nextSleeperID
        }
        guard let id else {
            callback()
            return {}
        }
        return { [self] in _ = self.lock.withLock { self.sleepers.removeValue(forKey: id) } }
    }
}

extension ManualClock {
    /// Returns once at least `count` tasks sleep on this clock (a timer was armed), yielding
    /// to the scheduler in between: tests wait on that event, not on time.
    public func waitForSleepers(_ count: Int = 1) async {
        while self.sleeperCount < count { await Task.yield() }
    }

    /// Returns once a task sleeps until `deadline` or earlier (a timer was armed for it,
    /// where the task sleeping for a later one woke for it: the count stays the same).
    public func waitForSleeper(until deadline: Instant) async {
        while !(self.earliestDeadline.map { $0 <= deadline } ?? false) { await Task.yield() }
    }
}

/// Yields until `condition` holds (bounded); for state other tasks reach without an event
/// to wait on. False if it never did. On a loaded machine (a build beside the tests) the
/// other tasks may need more than the yields give them: then it polls on, up to 10 s of
/// wall time, as a failure bound only (the condition, not the time, ends the wait).
public func untilTrue(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<100_000 {
        if try await condition() { return true }
        await Task.yield()
    }
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return try await condition()
}
