import Foundation
import Logging
import ServiceLifecycle
import NIOConcurrencyHelpers
import Testing
import TestSupport
import Transports

@testable import Bridge

/// A transport that writes at once and confirms when the test says: each batch is
/// announced on `written` (after it called the worker's `written`), then held until
/// ``release(_:)``. The shape of the XMPP transport with stream management.
final class AcknowledgingTransport: Transport, Sendable {
    let name = "home"
    let written: AsyncStream<[Delivery]>
    private let writtenSink: AsyncStream<[Delivery]>.Continuation
    private let answers: AsyncStream<DeliveryResult>
    private let answerSink: AsyncStream<DeliveryResult>.Continuation

    init() {
        (self.written, self.writtenSink) = AsyncStream.makeStream(of: [Delivery].self)
        (self.answers, self.answerSink) = AsyncStream.makeStream(of: DeliveryResult.self)
    }

    func release(_ result: DeliveryResult) { self.answerSink.yield(result) }
    func run() async throws { try? await gracefulShutdown() }
    func stop() async {}

    func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        await self.deliver(deliveries, written: {})
    }

    func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult] {
        written()
        self.writtenSink.yield(deliveries)
        var answers = self.answers.makeAsyncIterator()
        let answer = await answers.next() ?? .retryLater("stopped")
        return deliveries.map { _ in answer }
    }
}

/// Batches in flight (issue 21): a worker writes the next batch while earlier ones wait
/// for the server's acknowledgement, within the queue's window.
@Suite("delivery pipelining")
struct DeliveryPipeliningTests {
    typealias Queue = DeliveryQueueTests.Queue

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
        let folder = try TemporaryFolder()
        let store = try StateStore(path: folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "test"))
        let transport = AcknowledgingTransport()
        let worker = DeliveryWorker(
            transport: transport, journal: journal, configuration: .init(batchSize: 1, batchesInFlight: 2), clock: ManualClock(),
            logger: Logger(label: "test")
        )
        worker.setAvailable(true)
        worker.append((1...3).map { (delivery: DeliveryQueueTests.delivery(Int64($0)), enqueuedAt: Date(), attempts: 0) })
        let running = Task { try await worker.run() }
        var written = transport.written.makeAsyncIterator()
        #expect(await written.next()?.map(\.sequence) == [1])
        #expect(await written.next()?.map(\.sequence) == [2])  // before any acknowledgement
        transport.release(.delivered)
        #expect(await written.next()?.map(\.sequence) == [3])  // only once one was answered
        transport.release(.delivered)
        transport.release(.delivered)
        await worker.waitUntilEmpty()
        #expect(worker.count == 0)
        worker.stop()
        running.cancel()
        await journal.shutdown()
    }

    @Test("a delivery queued while a batch waits for its answer goes at once, not after that answer")
    func laterDeliveryDoesNotWait() async throws {
        let folder = try TemporaryFolder()
        let store = try StateStore(path: folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "test"))
        let transport = AcknowledgingTransport()
        let worker = DeliveryWorker(
            transport: transport, journal: journal, configuration: .init(batchSize: 10, batchesInFlight: 4), clock: ManualClock(),
            logger: Logger(label: "test")
        )
        worker.setAvailable(true)
        let running = Task { try await worker.run() }
        var written = transport.written.makeAsyncIterator()
        worker.append([(delivery: DeliveryQueueTests.delivery(1), enqueuedAt: Date(), attempts: 0)])
        #expect(await written.next()?.map(\.sequence) == [1])
        // The queue is idle now, the first batch unanswered: the next one must not wait for it.
        worker.append([(delivery: DeliveryQueueTests.delivery(2), enqueuedAt: Date(), attempts: 0)])
        #expect(await written.next()?.map(\.sequence) == [2])
        transport.release(.delivered)
        transport.release(.delivered)
        await worker.waitUntilEmpty()
        worker.stop()
        await worker.settled()
        running.cancel()
        await journal.shutdown()
    }
}

