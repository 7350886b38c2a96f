import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TransportCore

/// Runs one transport's ``DeliveryQueue``: takes a batch when the transport is available,
/// hands it over, applies the answers, and records completions, attempts and dead letters
/// in the ``Journal`` (without waiting: a completion lost in a crash means one repeated
/// delivery, never a lost one). It wakes on new deliveries, on availability, and when a
/// backoff ends; while idle it sleeps without timers.
///
/// Every decision is the queue's; this class only carries them out. Time comes from the
/// injected clock.
package final class DeliveryWorker<C: Clock>: Service, Sendable where C.Duration == Duration, C.Instant: Sendable {
    private struct Waiters {
        var room: [CheckedContinuation<Void, Never>] = []
        var empty: [CheckedContinuation<Void, Never>] = []
        /// Waiting for the batches in flight to be answered (``settled()``).
        var settled: [CheckedContinuation<Void, Never>] = []
        /// Batches in flight, plus one while the queue is being asked for the next.
        var delivering = 0
        var timer: Task<Void, Never>?
        var stopped = false
    }

    package let transport: any Transport
    private let journal: Journal
    private let clock: C
    private let logger: Logger
    private let queue: NIOLockedValueBox<DeliveryQueue<C.Instant>>
    private let waiters = NIOLockedValueBox(Waiters())
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    /// Told about each dead letter (counted for `status`).
    private let deadLettered: @Sendable (DeliveryQueue<C.Instant>.DeadLetter) -> Void
    /// Told about deliveries that left the queue: delivered (with when they were queued,
    /// if known) or failed for good. Metrics and `?wait=sent` listen.
    private let settledDeliveries: @Sendable (_ delivered: [(Delivery, Date?)], _ failed: [(Delivery, String)]) -> Void
    /// Whether this instance may still deliver for the transport (its lease, issue 26):
    /// asked before each batch, so a former owner that wakes up late sends nothing more.
    private let mayWork: @Sendable () -> Bool

    package init(
        transport: any Transport, journal: Journal, configuration: DeliveryQueue<C.Instant>.Configuration, clock: C, logger: Logger,
        deadLettered: @escaping @Sendable (DeliveryQueue<C.Instant>.DeadLetter) -> Void = { _ in },
        settled: @escaping @Sendable (_ delivered: [(Delivery, Date?)], _ failed: [(Delivery, String)]) -> Void = { _, _ in },
        mayWork: @escaping @Sendable () -> Bool = { true }
    ) {
        self.mayWork = mayWork
        self.settledDeliveries = settled
        self.transport = transport
        self.journal = journal
        self.clock = clock
        self.queue = NIOLockedValueBox(DeliveryQueue(configuration: configuration))
        self.deadLettered = deadLettered
        var logger = logger
        logger[metadataKey: "transport"] = "\(transport.name)"
        self.logger = logger
        (self.wakeups, self.wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Intake (called by the pipeline)

    /// Whether `deliveries` fit now.
    package func hasRoom(for deliveries: [Delivery]) -> Bool {
        self.queue.withLockedValue { $0.hasRoom(for: deliveries) }
    }

    /// Returns when the queue has taken some deliveries out (or the worker stopped).
    package func waitForRoom() async {
        await withCheckedContinuation { continuation in
            let resumeNow = self.waiters.withLockedValue { waiters -> Bool in
                if waiters.stopped { return true }
                waiters.room.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Adds committed deliveries and wakes the worker.
    package func append(_ deliveries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]) {
        self.queue.withLockedValue { queue in
            for entry in deliveries { queue.append(entry.delivery, enqueuedAt: entry.enqueuedAt, attempts: entry.attempts) }
        }
        self.wakeup.yield()
    }

    /// The transport can (or cannot) deliver now.
    package func setAvailable(_ available: Bool) {
        self.queue.withLockedValue { $0.setAvailable(available) }
        if available { self.wakeup.yield() }
    }

    package var isAvailable: Bool { self.queue.withLockedValue { $0.isAvailable } }

    /// A bounce of one of our relay ids; the journal entries it makes are returned for the
    /// pipeline to commit (a retry needs a fresh sequence). Nil when not ours.
    package func bounced(relayID: String, permanent: Bool, reason: String, sequence: Int64) -> DeliveryQueue<C.Instant>.Outcome? {
        let now = self.clock.now
        let outcome = self.queue.withLockedValue { $0.bounced(relayID: relayID, permanent: permanent, reason: reason, now: now, sequence: sequence) }
        if let outcome {
            for letter in outcome.deadLetters { self.report(letter) }
            if !outcome.deadLetters.isEmpty { self.settledDeliveries([], outcome.deadLetters.map { ($0.delivery, $0.reason) }) }
            self.wakeup.yield()
        }
        return outcome
    }

    /// Deliveries the target took before a restart; returns how many were still queued.
    package func acknowledged(relayIDs: [String]) -> Int {
        let wanted = Set(relayIDs)
        let (outcome, taken) = self.queue.withLockedValue { queue in
            let held = queue.pending.filter { wanted.contains($0.delivery.relayID) }.map { ($0.delivery, Optional($0.enqueuedAt)) }
            return (queue.acknowledged(relayIDs: wanted), held)
        }
        self.journal.record(outcome.entries)
        if !taken.isEmpty { self.settledDeliveries(taken, []) }
        if outcome.delivered > 0 { self.signalProgress() }
        return outcome.delivered
    }

    /// A target held back by ``DeliveryResult/waitForTarget(_:)`` can take deliveries again.
    package func targetReady(_ target: Endpoint) {
        if self.queue.withLockedValue({ $0.targetReady(target) }) { self.wakeup.yield() }
    }

    /// Operator actions (`xmpp-bridge queue retry|drop`).
    package func retryNow(_ sequence: Int64) -> Bool {
        let found = self.queue.withLockedValue { $0.retryNow(sequence) }
        if found { self.wakeup.yield() }
        return found
    }

    package func drop(_ sequence: Int64) -> Bool {
        let found = self.queue.withLockedValue { $0.drop(sequence) }
        if found {
            self.journal.record([.complete(sequence: sequence)])
            self.signalProgress()
        }
        return found
    }

    /// What `status` and `queue list` show.
    package func snapshot() -> (pending: [DeliveryQueue<C.Instant>.Item], count: Int, oldest: Date?) {
        self.queue.withLockedValue { ($0.pending, $0.count, $0.oldest) }
    }

    package var count: Int { self.queue.withLockedValue { $0.count } }

    /// Returns once the queue is empty.
    package func waitUntilEmpty() async {
        await withCheckedContinuation { continuation in
            let resumeNow = self.waiters.withLockedValue { waiters -> Bool in
                if waiters.stopped || self.count == 0 { return true }
                waiters.empty.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Returns once no batch is in flight: the one being delivered, if any, was answered
    /// and its outcome applied to the queue. After ``stop()``, no new batch starts, so the
    /// queue's ``snapshot()`` then holds only what was not delivered.
    package func settled() async {
        await withCheckedContinuation { continuation in
            let resumeNow = self.waiters.withLockedValue { waiters -> Bool in
                if waiters.delivering == 0 { return true }
                waiters.settled.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Ends `run()` (the transport was removed by a reload).
    package func stop() {
        let waiting = self.waiters.withLockedValue { waiters -> [CheckedContinuation<Void, Never>] in
            waiters.stopped = true
            waiters.timer?.cancel()
            defer {
                waiters.room.removeAll()
                waiters.empty.removeAll()
            }
            return waiters.room + waiters.empty
        }
        self.queue.withLockedValue { $0.setAvailable(false) }
        self.wakeup.finish()
        for waiter in waiting { waiter.resume() }
    }

    // MARK: Running

    package func run() async throws {
        // On the target's event loop where it has one: the journal's thread wakes this task
        // there (the second and last thread hop), and the batch reaches the socket from it.
        await withTaskExecutorPreference(self.transport.executor) {
            await self.serve()
        }
    }

    private func serve() async {
        self.wakeup.yield()  // whatever the journal held at start
        // Batches in flight run as children of this group; on graceful shutdown no new
        // batch starts, and the group waits for those in flight to be answered (so they
        // are not sent twice after a restart).
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                for await _ in self.wakeups {
                    await self.drain(into: &group)
                }
            } onGracefulShutdown: {
                self.wakeup.finish()
            }
        }
    }

    /// Hands batches to the transport while the queue gives them: each in a child task
    /// that waits for the transport's answer, the next as soon as the one before is
    /// written (up to the queue's `batchesInFlight`). Returns when the queue has nothing
    /// to give now; an answered batch wakes the worker again.
    private func drain(into group: inout DiscardingTaskGroup) async {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            guard self.mayWork() else {
                self.logger.warning("lease no longer held here; delivering stops")
                return
            }
            let now = self.clock.now
            // Counted before the queue is asked, so settled() cannot slip in between the
            // queue handing out a batch and the batch counting as in flight.
            self.waiters.withLockedValue { $0.delivering += 1 }
            switch self.queue.withLockedValue({ $0.next(now: now) }) {
            case .idle:
                self.batchEnded()
                return
            case .wait(let until):
                self.batchEnded()
                self.wake(at: until)
                return
            case .deliver(let batch):
                let written = OneShotSignal()
                group.addTask {
                    let results = await self.transport.deliver(batch) { written.fire() }
                    written.fire()
                    self.finished(batch, results: results)
                    self.batchEnded()
                    // The window has room again, or a retry is due: look at the queue.
                    self.wakeup.yield()
                }
                await written.wait()
            }
        }
    }

    /// Applies one batch's answers: the queue's outcome, counters, the journal.
    private func finished(_ batch: [Delivery], results: [DeliveryResult]) {
        let later = self.clock.now
        let (outcome, queuedAt) = self.queue.withLockedValue { queue in
            let times = queue.enqueuedTimes(of: Set(batch.map(\.sequence)))
            return (queue.finished(batch, results: results, now: later), times)
        }
        // Counted before they are written: whoever sees a dead letter stored sees it counted.
        for letter in outcome.deadLetters { self.report(letter) }
        var delivered: [(Delivery, Date?)] = []
        for (delivery, result) in zip(batch, results) {
            if case .delivered = result { delivered.append((delivery, queuedAt[delivery.sequence])) }
        }
        if !delivered.isEmpty || !outcome.deadLetters.isEmpty {
            self.settledDeliveries(delivered, outcome.deadLetters.map { ($0.delivery, $0.reason) })
        }
        if outcome.entries.allSatisfy(\.isCompletion) {
            // Nothing waits on these: they ride the next commit.
            self.journal.recordLazily(outcome.entries)
        } else {
            self.journal.record(outcome.entries)
        }
        if outcome.retried > 0 {
            self.logger.info("delivery postponed", metadata: ["reason": "\(Self.reason(results))"])
        }
        self.signalProgress()
    }

    /// A batch was answered (or the queue had none): once none is in flight, wakes
    /// ``settled()`` waiters.
    private func batchEnded() {
        let settled = self.waiters.withLockedValue { waiters -> [CheckedContinuation<Void, Never>] in
            waiters.delivering -= 1
            guard waiters.delivering == 0 else { return [] }
            defer { waiters.settled.removeAll() }
            return waiters.settled
        }
        for waiter in settled { waiter.resume() }
    }

    private func report(_ letter: DeliveryQueue<C.Instant>.DeadLetter) {
        self.logger.error(
            "delivery moved to dead letters",
            metadata: ["target": "\(letter.delivery.target)", "sequence": "\(letter.delivery.sequence)", "attempts": "\(letter.attempts)", "reason": "\(letter.reason)"]
        )
        self.deadLettered(letter)
    }

    private static func reason(_ results: [DeliveryResult]) -> String {
        for result in results { if case .retryLater(let reason) = result { return reason } }
        return "-"
    }

    /// Arms one timer for the end of the earliest backoff.
    private func wake(at instant: C.Instant) {
        let clock = self.clock
        let wakeup = self.wakeup
        let timer = Task {
            guard (try? await clock.sleep(until: instant, tolerance: nil)) != nil else { return }
            wakeup.yield()
        }
        self.waiters.withLockedValue { waiters in
            waiters.timer?.cancel()
            waiters.timer = timer
        }
    }

    /// Wakes intake waiting for room, and drain waiters once the queue is empty.
    private func signalProgress() {
        let count = self.count
        let waiting = self.waiters.withLockedValue { waiters -> [CheckedContinuation<Void, Never>] in
            var resumed = waiters.room
            waiters.room.removeAll()
            if count == 0 {
                resumed += waiters.empty
                waiters.empty.removeAll()
            }
            return resumed
        }
        for waiter in waiting { waiter.resume() }
    }
}
