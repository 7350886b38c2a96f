import NIOConcurrencyHelpers

/// Runs a consumer only while something waits for it (issue 43): a wake-up starts a task on
/// the account's executor that takes what is buffered and ends when nothing is left, so an
/// idle account keeps no task, and no stack of async frames, waiting. It takes what a
/// connection reads (``ElementInbox``) and what a session emits (``SessionEventStream``).
/// One run at a time, so what is taken stays in order; a wake-up during a run makes it look
/// again before it ends.
public final class Drain: Sendable {
    private struct State {
        var body: (@Sendable () async -> Void)?
        var running = false
        var pending = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())
    private let executor: (any TaskExecutor)?

    public init(executor: (any TaskExecutor)?) {
        self.executor = executor
    }

    /// From now on a wake-up runs `body`, which takes what waits and returns; one run now.
    public func start(_ body: @escaping @Sendable () async -> Void) {
        self.state.withLockedValue { $0.body = body }
        self.wake()
    }

    /// Something waits: a run starts, or the one under way looks again before it ends.
    public func wake() {
        let body = self.state.withLockedValue { state -> (@Sendable () async -> Void)? in
            guard let body = state.body, !state.running else {
                state.pending = true
                return nil
            }
            state.running = true
            state.pending = false
            return body
        }
        guard let body else { return }
        Task(executorPreference: self.executor) { await self.run(body) }
    }

    /// Whether a run is under way (an idle account's drain has none).
    public var isRunning: Bool { self.state.withLockedValue { $0.running } }

    /// Returns once no run is under way and no wake-up waits for one.
    public func idle() async {
        await withCheckedContinuation { continuation in
            let now = self.state.withLockedValue { state -> Bool in
                if !state.running { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func run(_ body: @Sendable () async -> Void) async {
        while true {
            await body()
            let (again, waiters) = self.state.withLockedValue { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.pending {
                    state.pending = false
                    return (true, [])
                }
                state.running = false
                defer { state.idleWaiters.removeAll() }
                return (false, state.idleWaiters)
            }
            guard again else {
                for waiter in waiters { waiter.resume() }
                return
            }
        }
    }
}
