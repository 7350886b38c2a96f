import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import Bridge

/// The transports' services as one service of the process's group (issue 43): a graceful
/// shutdown reaches all of them at once, not one after another.
@Suite("Transport services")
struct TransportServicesTests {
    /// Counts the services told to shut down; each waits, once told, until all were.
    final class Barrier: Sendable {
        let expected: Int
        private let state = Mutex<(told: Int, waiting: [CheckedContinuation<Void, Never>])>((0, []))

        init(expected: Int) { self.expected = expected }

        func toldAndWait() async {
            await withCheckedContinuation { continuation in
                let ready = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.told += 1
                    state.waiting.append(continuation)
                    guard state.told == self.expected else { return [] }
                    defer { state.waiting.removeAll() }
                    return state.waiting
                }
                for waiter in ready { waiter.resume() }
            }
        }
    }

    /// A transport's service that, told to shut down, returns only once every other was told
    /// too: told one at a time, the first would wait forever.
    struct WaitsForAll: Service {
        let barrier: Barrier
        let started: AsyncStream<Void>.Continuation

        func run() async throws {
            self.started.yield()
            try? await gracefulShutdown()
            await self.barrier.toldAndWait()
        }
    }

    @Test("told of a graceful shutdown, every transport service is told at once, those added while running too", .timeLimit(.minutes(1)))
    func toldAtOnce() async throws {
        let barrier = Barrier(expected: 5)
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        let progress = StopProgress(clock: ContinuousClock(), logger: Logger(label: "test"))
        let transports = TransportServices(
            (0..<4).map { .init(name: "transport \($0)", service: WaitsForAll(barrier: barrier, started: starting)) }, progress: progress, logger: Logger(label: "test")
        )
        let group = ServiceGroup(configuration: .init(services: [transports], logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = started.makeAsyncIterator()
            for _ in 0..<4 { await iterator.next() }
            transports.add(.init(name: "transport 4", service: WaitsForAll(barrier: barrier, started: starting)))
            await iterator.next()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
