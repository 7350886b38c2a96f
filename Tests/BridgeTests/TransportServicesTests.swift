import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

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
            (0..<4).map { .service(WaitsForAll(barrier: barrier, started: starting), name: "transport \($0)") }, progress: progress, logger: Logger(label: "test")
        )
        let group = ServiceGroup(configuration: .init(services: [transports], logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = started.makeAsyncIterator()
            for _ in 0..<4 { await iterator.next() }
            transports.add(.service(WaitsForAll(barrier: barrier, started: starting), name: "transport 4"))
            await iterator.next()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// A worker over a ``HeldTransport`` (each batch waits for the test's answer) and the
    /// transports' service holding it, in a group.
    struct WorkerScene {
        let folder: TemporaryFolder
        let journal: Journal
        let transport = HeldTransport(name: "home")
        let worker: DeliveryWorker<ContinuousClock>
        let progress = StopProgress(clock: ContinuousClock(), logger: Logger(label: "test"))
        let services: TransportServices
        let group: ServiceGroup

        init() throws {
            self.folder = try TemporaryFolder()
            self.journal = try Journal(store: try SQLiteStateStore(path: self.folder.path("state.sqlite")), logger: Logger(label: "test"))
            self.worker = DeliveryWorker(
                transport: self.transport, journal: self.journal, configuration: .init(batchSize: 1, batchesInFlight: 1), clock: ContinuousClock(), logger: Logger(label: "test")
            )
            self.worker.setAvailable(true)
            self.services = TransportServices([.worker(self.worker, name: "delivery worker home")], progress: self.progress, logger: Logger(label: "test"))
            self.group = ServiceGroup(configuration: .init(services: [self.services], logger: Logger(label: "test")))
        }
    }

    @Test("a worker runs without a task of its own; a graceful shutdown waits for its batch in flight to be answered", .timeLimit(.minutes(1)))
    func workerShutdownWaitsForBatch() async throws {
        let scene = try WorkerScene()
        let running = Task { try await scene.group.run() }
        var entered = scene.transport.entered.makeAsyncIterator()
        #expect(await untilTrue { scene.services.workerCount == 1 })
        scene.worker.append([(delivery: DeliveryQueueTests.delivery(1), enqueuedAt: Date(), attempts: 0)])
        #expect(await entered.next()?.map(\.sequence) == [1])
        await scene.group.triggerGracefulShutdown()
        // The shutdown waits on the worker, whose batch is still unanswered.
        #expect(await untilTrue { scene.progress.waitingOn == ["delivery worker home"] })
        scene.worker.append([(delivery: DeliveryQueueTests.delivery(2), enqueuedAt: Date(), attempts: 0)])
        scene.transport.release(.delivered)
        try await running.value
        #expect(scene.progress.waitingOn.isEmpty)
        // Delivery 2 came after the shutdown began: it stays queued for the next start.
        #expect(scene.worker.snapshot().pending.map(\.delivery.sequence) == [2])
        await scene.journal.shutdown()
    }

    @Test("a worker stopped by a reload leaves the table; the shutdown then does not wait on it", .timeLimit(.minutes(1)))
    func stoppedWorkerForgotten() async throws {
        let scene = try WorkerScene()
        let running = Task { try await scene.group.run() }
        #expect(await untilTrue { scene.services.workerCount == 1 })
        scene.worker.stop()
        #expect(scene.services.workerCount == 0)
        await scene.group.triggerGracefulShutdown()
        try await running.value
        await scene.journal.shutdown()
    }
}
