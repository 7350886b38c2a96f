import Foundation
import Logging
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// Batches in flight (issue 21): a worker writes the next batch while earlier ones wait
/// for the server's acknowledgement, within the queue's window.
@Suite("delivery pipelining")
struct DeliveryPipeliningTests {
    typealias Queue = DeliveryQueueTests.Queue

    /// A running worker over a ``HeldTransport``, with a journal in a temporary folder.
    struct Running {
        let folder: TemporaryFolder
        let journal: Journal
        let transport = HeldTransport(name: "home")
        let worker: DeliveryWorker<ManualClock>
        let task: Task<Void, any Error>

        init(batchSize: Int, batchesInFlight: Int) throws {
            self.folder = try TemporaryFolder()
            self.journal = try Journal(store: try SQLiteStateStore(path: self.folder.path("state.sqlite")), logger: Logger(label: "test"))
            self.worker = DeliveryWorker(
                transport: self.transport, journal: self.journal, configuration: .init(batchSize: batchSize, batchesInFlight: batchesInFlight),
                clock: ManualClock(), logger: Logger(label: "test")
            )
            self.worker.setAvailable(true)
            let worker = self.worker
            self.task = Task { try await worker.run() }
        }

        func append(_ sequences: ClosedRange<Int64>) {
            self.worker.append(sequences.map { (delivery: DeliveryQueueTests.delivery($0), enqueuedAt: Date(), attempts: 0) })
        }

        func finish() async {
            await self.worker.waitUntilEmpty()
            self.worker.stop()
            await self.worker.settled()
            self.task.cancel()
            await self.journal.shutdown()
        }
    }

    @Test("an idle worker holds no task: its drain ends once the batch is answered and the queue is empty, and the next delivery starts another", .timeLimit(.minutes(1)))
    func idleWorkerHoldsNoTask() async throws {
        let running = try Running(batchSize: 1, batchesInFlight: 1)
        var entered = running.transport.entered.makeAsyncIterator()
        for sequence in Int64(1)...2 {
            running.append(sequence...sequence)
            #expect(await entered.next()?.map(\.sequence) == [sequence])
            #expect(running.worker.isDraining)
            running.transport.release(.delivered)
            #expect(await untilTrue { running.worker.count == 0 && !running.worker.isDraining })
        }
        await running.finish()
    }

    @Test("the queue hands out up to batchesInFlight batches, never an item twice, and takes more as answers come")
    func queueWindow() {
        var queue = DeliveryQueueTests.queue([1, 2, 3, 4], configuration: .init(batchSize: 1, batchesInFlight: 2))
        let first = [DeliveryQueueTests.delivery(1)]
        let second = [DeliveryQueueTests.delivery(2)]
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver(first))
        // The same target's next delivery goes while the first waits for its answer.
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver(second))
        #expect(queue.next(now: DeliveryQueueTests.t0) == .idle)
        #expect(queue.finished(first, results: [.delivered], now: DeliveryQueueTests.t0).delivered == 1)
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver([DeliveryQueueTests.delivery(3)]))
        #expect(queue.finished(second, results: [.delivered], now: DeliveryQueueTests.t0).delivered == 1)
        #expect(queue.count == 2)
    }

    @Test("a connection lost under two batches: both come back, and go again in order")
    func bothRetried() {
        var queue = DeliveryQueueTests.queue([1, 2], configuration: .init(batchSize: 1, batchesInFlight: 2, maxAttempts: 3))
        let first = [DeliveryQueueTests.delivery(1)]
        let second = [DeliveryQueueTests.delivery(2)]
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver(first))
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver(second))
        _ = queue.finished(first, results: [.retryLater("connection lost")], now: DeliveryQueueTests.t0)
        _ = queue.finished(second, results: [.retryLater("connection lost")], now: DeliveryQueueTests.t0)
        // The first waits out its backoff, and holds the second behind it (same target).
        #expect(queue.next(now: DeliveryQueueTests.t0) == .wait(until: DeliveryQueueTests.at(1)))
        #expect(queue.next(now: DeliveryQueueTests.at(1)) == .deliver(first))
        #expect(queue.next(now: DeliveryQueueTests.at(1)) == .deliver(second))
    }

    @Test("a delivery dropped while in flight leaves the front once its batch is answered")
    func droppedInFlight() {
        var queue = DeliveryQueueTests.queue([1, 2], configuration: .init(batchSize: 2))
        let batch = [1, 2].map { DeliveryQueueTests.delivery($0) }
        #expect(queue.next(now: DeliveryQueueTests.t0) == .deliver(batch))
        let dropped = queue.drop(1)
        #expect(dropped)
        let outcome = queue.finished(batch, results: [.delivered, .delivered], now: DeliveryQueueTests.t0)
        #expect(outcome.delivered == 1)
        #expect(queue.items.isEmpty)
    }

    @Test("the worker writes the next batch before the first is acknowledged, and no more than the window")
    func workerWritesAhead() async throws {
        let running = try Running(batchSize: 1, batchesInFlight: 2)
        var written = running.transport.entered.makeAsyncIterator()
        running.append(1...3)
        #expect(await written.next()?.map(\.sequence) == [1])
        #expect(await written.next()?.map(\.sequence) == [2])  // before any acknowledgement
        running.transport.release(.delivered)
        #expect(await written.next()?.map(\.sequence) == [3])  // only once one was answered
        running.transport.release(.delivered)
        running.transport.release(.delivered)
        await running.finish()
        #expect(running.worker.count == 0)
    }

    @Test("a delivery queued while a batch waits for its answer goes at once, not after that answer")
    func laterDeliveryDoesNotWait() async throws {
        let running = try Running(batchSize: 10, batchesInFlight: 4)
        var written = running.transport.entered.makeAsyncIterator()
        running.append(1...1)
        #expect(await written.next()?.map(\.sequence) == [1])
        // The queue is idle now, the first batch unanswered: the next one must not wait for it.
        running.append(2...2)
        #expect(await written.next()?.map(\.sequence) == [2])
        running.transport.release(.delivered)
        running.transport.release(.delivered)
        await running.finish()
    }
}
