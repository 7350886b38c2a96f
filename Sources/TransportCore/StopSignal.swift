import NIOConcurrencyHelpers

/// A one-shot signal a transport's `run()` can wait on, so `stop()` ends it.
public final class StopSignal: Sendable {
    private let state = NIOLockedValueBox<(stopped: Bool, waiters: [Int: CheckedContinuation<Void, Never>], next: Int)>((false, [:], 0))

    public init() {}

    public func stop() {
        let waiters = self.state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isStopped: Bool { self.state.withLockedValue { $0.stopped } }

    /// Returns once ``stop()`` was called.
    /// Returns once ``stop()`` was called, or when the waiting task is cancelled.
    public func wait() async {
        let id = self.state.withLockedValue { state -> Int in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = self.state.withLockedValue { state -> Bool in
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Runs `body` until it returns or ``stop()`` is called, whichever comes first; true
    /// when `body` returned by itself. Either way the signal is stopped afterwards (that
    /// ends the waiting side), so ``isStopped`` cannot tell the two apart.
    @discardableResult
    public func race(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                await self.wait()
                return false
            }
            let bodyReturned = await group.next() ?? false
            group.cancelAll()
            self.stop()
            return bodyReturned
        }
    }
}
