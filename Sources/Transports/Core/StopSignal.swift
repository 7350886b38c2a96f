import NIOConcurrencyHelpers

/// A one-shot signal a transport's `run()` can wait on, so `stop()` ends it.
public final class StopSignal: Sendable {
    private let state = NIOLockedValueBox<(stopped: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func stop() {
        let waiters = self.state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isStopped: Bool { self.state.withLockedValue { $0.stopped } }

    /// Returns once ``stop()`` was called.
    public func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = self.state.withLockedValue { state -> Bool in
                if state.stopped { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Runs `body` until it returns or ``stop()`` is called, whichever comes first.
    public func race(_ body: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await body() }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
            self.stop()
        }
    }
}
