import Logging
import ServiceLifecycle
import Synchronization

/// What a graceful shutdown (SIGTERM, SIGINT) still waits on: the parts of the process
/// that have not returned yet, named in a warning every `patience` once the shutdown
/// began, so a stop that hangs says where.
///
/// The parts register while they run (``running(_:_:)``); the top-level services are
/// wrapped in ``Watched``. One task, ``watch()``, does the waiting and the telling: a
/// transport costs an entry in a table, not a task of its own.
final class StopProgress<WatchClock: Clock>: Sendable where WatchClock.Duration == Duration {
    private struct State {
        var nextKey = 0
        var running: [Int: String] = [:]
        var began: WatchClock.Instant?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let clock: WatchClock
    private let patience: Duration
    private let logger: Logger

    init(clock: WatchClock, patience: Duration = .seconds(5), logger: Logger) {
        self.clock = clock
        self.patience = patience
        self.logger = logger
    }

    /// Runs `body` as the part `name`: listed in the warnings while it has not returned.
    func running<T: Sendable>(_ name: String, _ body: () async throws -> T) async rethrows -> T {
        let key = self.state.withLock { state in
            defer { state.nextKey += 1 }
            state.running[state.nextKey] = name
            return state.nextKey
        }
        defer { _ = self.state.withLock { $0.running.removeValue(forKey: key) } }
        return try await body()
    }

    /// The shutdown began (the first part was told): ``watch()`` starts counting.
    func began() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.began == nil else { return nil }
            state.began = self.clock.now
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The parts not returned yet, sorted, each name once with its count.
    var waitingOn: [String] {
        let names = self.state.withLock { Array($0.running.values) }
        var counts: [String: Int] = [:]
        for name in names { counts[name, default: 0] += 1 }
        return counts.keys.sorted().map { counts[$0]! > 1 ? "\($0) ×\(counts[$0]!)" : $0 }
    }

    /// Waits for the shutdown to begin, then warns every `patience` while some part runs;
    /// returns when cancelled (the process is done stopping).
    func watch() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = self.state.withLock { state -> Bool in
                    if state.began != nil || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        guard let began = self.state.withLock({ $0.began }) else { return }
        var deadline = began.advanced(by: self.patience)
        while (try? await self.clock.sleep(until: deadline, tolerance: nil)) != nil {
            deadline = deadline.advanced(by: self.patience)
            let parts = self.waitingOn
            guard !parts.isEmpty else { continue }
            let waited = began.duration(to: self.clock.now).components.seconds
            self.logger.warning("still stopping after \(waited) s, waiting on: \(parts.joined(separator: ", "))")
        }
    }

    /// A service of the process's group, listed under `name` while it runs.
    struct Watched: Service {
        let name: String
        let service: any Service
        let progress: StopProgress

        func run() async throws {
            try await self.progress.running(self.name) {
                try await withGracefulShutdownHandler {
                    try await self.service.run()
                } onGracefulShutdown: {
                    self.progress.began()
                }
            }
        }
    }
}
