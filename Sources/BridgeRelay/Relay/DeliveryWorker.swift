import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TransportCore

/// Runs one transport's ``DeliveryQueue``: takes a batch when the transport is available,
/// hands it over, applies the answers, and records completions, attempts and dead letters
/// in the ``Journal`` (without waiting: a completion lost in a crash means one repeated
/// delivery, never a lost one). It wakes on new deliveries, on availability, and when a
/// backoff ends. While idle it holds no task: a wake-up starts one on the transport's
/// executor, which hands batches over and ends once none is in flight and the queue has
/// nothing to give (an idle account's worker costs its object and its queue, issue 43).
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
        /// ``start()`` was called: wake-ups start the drain from then on.
        var started = false
        /// No new batch starts (a graceful shutdown or ``stop()``).
        var closing = false
        /// Waiting for ``close()`` or ``stop()`` (``run()``).
        var closed: [CheckedContinuation<Void, Never>] = []
        /// The drain's task runs; a wake-up then goes to it, not to a new task.
        var draining = false
        /// A wake-up the running drain has not looked at yet.
        var wakePending = false
        /// The drain waiting for a wake-up (true) or to end (false).
        var drainWaiter: CheckedContinuation<Bool, Never>?
        /// Told once when ``stop()`` ends the worker (its owner forgets it).
        var onStop: (@Sendable () -> Void)?
    }

    /// What a wake-up does: nothing (not started, closing, or the drain will look again),
    /// start the drain's task, or wake the drain waiting for it.
    private enum WakeStep {
        case none, start, resume(CheckedContinuation<Bool, Never>)
    }

    package let transport: any Transport
    private let journal: Journal
    private let clock: C
    private let logger: Logger
    private let queue: NIOLockedValueBox<DeliveryQueue<C.Instant>>
    private let waiters = NIOLockedValueBox(Waiters())
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
    }

    // MARK: Intake (called by the pipeline)

    /// Whether `deliveries` fit now.
    package func hasRoom(for deliveries: [Delivery]) -> Bool {
        self.queue.withLockedValue { $0.hasRoom(for: deliveries) }
    }

    /// Returns when the queue has taken some deliveries out (or the worker stopped).
    package func waitForRoom() async {
        await self.park(on: \.room) { $0.stopped }
    }

    /// Adds committed deliveries and wakes the worker.
    package func append(_ deliveries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]) {
        self.queue.withLockedValue { queue in
            for entry in deliveries { queue.append(entry.delivery, enqueuedAt: entry.enqueuedAt, attempts: entry.attempts) }
        }
        self.wake()
    }

    /// The transport can (or cannot) deliver now.
    package func setAvailable(_ available: Bool) {
        self.queue.withLockedValue { $0.setAvailable(available) }
        if available { self.wake() }
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
            self.wake()
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
        if self.queue.withLockedValue({ $0.targetReady(target) }) { self.wake() }
    }

    /// Operator actions (`xmpp-bridge queue retry|drop`).
    package func retryNow(_ sequence: Int64) -> Bool {
        let found = self.queue.withLockedValue { $0.retryNow(sequence) }
        if found { self.wake() }
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
        await self.park(on: \.empty) { $0.stopped || self.count == 0 }
    }

    /// Returns once no batch is in flight: the one being delivered, if any, was answered
    /// and its outcome applied to the queue. After ``stop()``, no new batch starts, so the
    /// queue's ``snapshot()`` then holds only what was not delivered.
    package func settled() async {
        await self.park(on: \.settled) { $0.delivering == 0 }
    }

    /// Ends `run()` (the transport was removed by a reload).
    package func stop() {
        let (waiting, onStop) = self.waiters.withLockedValue { waiters -> ([CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) in
            waiters.stopped = true
            waiters.timer?.cancel()
            defer {
                waiters.room.removeAll()
                waiters.empty.removeAll()
                waiters.onStop = nil
            }
            return (waiters.room + waiters.empty, waiters.onStop)
        }
        self.queue.withLockedValue { $0.setAvailable(false) }
        self.close()
        for waiter in waiting { waiter.resume() }
        onStop?()
    }

    // MARK: Running

    /// Starts delivering (``start(onStop:)``) and returns after a graceful shutdown, a
    /// cancellation or ``stop()``, once the batches in flight were answered (so they are not
    /// sent twice after a restart).
    package func run() async throws {
        self.start()
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await self.waitUntilClosed()
            } onCancel: {
                self.close()
            }
        } onGracefulShutdown: {
            self.close()
        }
        await self.settled()
    }

    /// Delivers from now on, whatever the queue holds already included, without a task
    /// of its own while idle. `onStop` is told once ``stop()`` ended the worker.
    package func start(onStop: (@Sendable () -> Void)? = nil) {
        self.waiters.withLockedValue {
            $0.started = true
            $0.onStop = onStop
        }
        self.wake()
    }

    /// No new batch starts; those in flight go on (``settled()`` waits for them).
    package func close() {
        let waiting = self.waiters.withLockedValue { waiters -> (closed: [CheckedContinuation<Void, Never>], drain: CheckedContinuation<Bool, Never>?) in
            waiters.closing = true
            waiters.timer?.cancel()
            defer {
                waiters.closed.removeAll()
                waiters.drainWaiter = nil
            }
            return (waiters.closed, waiters.drainWaiter)
        }
        for waiter in waiting.closed { waiter.resume() }
        waiting.drain?.resume(returning: true)
    }

    private func waitUntilClosed() async {
        await self.park(on: \.closed) { $0.closing }
    }

    /// Returns at once if `ready` holds, else once a continuation added to the list at
    /// `list` is resumed (the check and the append under one lock).
    private func park(on list: WritableKeyPath<Waiters, [CheckedContinuation<Void, Never>]>, unless ready: (Waiters) -> Bool) async {
        await withCheckedContinuation { continuation in
            let now = self.waiters.withLockedValue { waiters -> Bool in
                if ready(waiters) { return true }
                waiters[keyPath: list].append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Whether the drain's task runs (an idle worker holds none).
    var isDraining: Bool { self.waiters.withLockedValue { $0.draining } }

    /// Something may be delivered: the running drain looks again, or a new one starts.
    private func wake() {
        let step = self.waiters.withLockedValue { waiters -> WakeStep in
            guard waiters.started, !waiters.closing else { return .none }
            guard waiters.draining else {
                waiters.draining = true
                return .start
            }
            if let waiter = waiters.drainWaiter {
                waiters.drainWaiter = nil
                return .resume(waiter)
            }
            waiters.wakePending = true
            return .none
        }
        switch step {
        case .none: break
        case .start:
            // On the target's event loop where it has one: the journal's thread wakes the
            // worker there (the second and last thread hop), and the batch reaches the
            // socket from it.
            Task(executorPreference: self.transport.executor) { await self.drainWhileBusy() }
        case .resume(let waiter): waiter.resume(returning: true)
        }
    }

    /// The drain's task: batches in flight run as its children; it ends once none is in
    /// flight and no wake-up came since the queue last had nothing to give. Not a child of
    /// ``run()``: cancelling that closes the worker, and a batch in flight is then answered
    /// by the transport (at the latest after its delivery timeout), not cancelled.
    private func drainWhileBusy() async {
        await withDiscardingTaskGroup { group in
            repeat {
                await self.drain(into: &group)
            } while await self.nextWake()
        }
    }

    /// True when a wake-up came (look at the queue again); false when the drain ends:
    /// nothing in flight, or closing (the group then waits for the batches in flight).
    private func nextWake() async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = self.waiters.withLockedValue { waiters -> Bool? in
                if waiters.closing || (waiters.delivering == 0 && !waiters.wakePending) {
                    waiters.draining = false
                    waiters.wakePending = false
                    return false
                }
                if waiters.wakePending {
                    waiters.wakePending = false
                    return true
                }
                waiters.drainWaiter = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Hands batches to the transport while the queue gives them: each in a child task
    /// that waits for the transport's answer, the next as soon as the one before is
    /// written (up to the queue's `batchesInFlight`). Returns when the queue has nothing
    /// to give now; an answered batch wakes the worker again.
    private func drain(into group: inout DiscardingTaskGroup) async {
        while true {
            guard self.mayWork() else {
                self.logger.warning("lease no longer held here; delivering stops")
                return
            }
            // Counted before the queue is asked, so settled() cannot slip in between the
            // queue handing out a batch and the batch counting as in flight; in the same
            // lock as the check for closing, so no batch starts once close() returned.
            let open = self.waiters.withLockedValue { waiters -> Bool in
                guard !waiters.closing else { return false }
                waiters.delivering += 1
                return true
            }
            guard open else { return }
            let now = self.clock.now
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
                    self.wake()
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
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(until: instant, tolerance: nil)) != nil else { return }
            self?.wake()
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
