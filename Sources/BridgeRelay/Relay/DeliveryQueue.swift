import BridgeState
import Foundation
import NIOCore
import TransportCore

/// One transport's queued deliveries in memory, the mirror of its rows in the journal, and
/// the rules for taking them (issue 8): a pure state machine, no I/O, time passed in.
///
/// - Order is kept per target (transport + address): a delivery is never taken while an
///   earlier one for the same target waits, but a target waiting out a backoff does not
///   hold up the others.
/// - Up to `batchesInFlight` batches are in flight at a time (a transport that writes one
///   while earlier ones wait for the server's acknowledgement); each batch's results come
///   back in order. A later batch may hold later deliveries for a target whose earlier one
///   is still in flight: they are written in order, and a connection that fails takes
///   them all back (cumulative acknowledgements).
/// - An attempt that ends in "retry later" counts against the first delivery it stopped
///   at, which then waits `retryInitialDelay · 2^(attempts-1)` (capped); after
///   `maxAttempts`, or at once on a permanent failure, it becomes a dead letter.
/// - Capacity (`maxRows`, `maxBytes`) is checked before intake, which waits for room
///   instead of dropping.
/// - Recently delivered items are remembered (`bounceWindow`), so a bounce that arrives
///   after the server accepted a message can retry it or make it a dead letter.
/// - A target that cannot take deliveries for now (``DeliveryResult/waitForTarget(_:)``: a
///   room we are out of) holds its deliveries without counting attempts, until the
///   transport says it is ready (also while the batch is still in flight) or
///   `targetRecheck` has passed.
package struct DeliveryQueue<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    package struct Configuration: Sendable, Equatable {
        package var batchSize: Int = 100
        /// Batches handed to the transport and not yet answered, at most (1: stop and wait).
        package var batchesInFlight: Int = 1
        package var maxAttempts: Int = 10
        package var retryInitialDelay: Duration = .seconds(1)
        package var retryMaximumDelay: Duration = .seconds(300)
        package var maxRows: Int = 100_000
        package var maxBytes: Int = 64 << 20
        package var bounceWindow: Int = 1_000
        /// A target that cannot take deliveries now (a room we are out of) is tried again
        /// after this long even if it never reports being ready (no attempt is counted).
        package var targetRecheck: Duration = .seconds(60)

        package init(batchSize: Int = 100, batchesInFlight: Int = 1, maxAttempts: Int = 10, retryInitialDelay: Duration = .seconds(1), retryMaximumDelay: Duration = .seconds(300), maxRows: Int = 100_000, maxBytes: Int = 64 << 20, bounceWindow: Int = 1_000, targetRecheck: Duration = .seconds(60)) {
            self.batchSize = batchSize
            self.batchesInFlight = batchesInFlight
            self.maxAttempts = maxAttempts
            self.retryInitialDelay = retryInitialDelay
            self.retryMaximumDelay = retryMaximumDelay
            self.maxRows = maxRows
            self.maxBytes = maxBytes
            self.bounceWindow = bounceWindow
            self.targetRecheck = targetRecheck
        }
    }

    package struct Item: Sendable {
        package var delivery: Delivery
        package var enqueuedAt: Date
        package var attempts: Int
        package var notBefore: Instant?
        package var lastError: String?
        package var inFlight = false
        /// Completed, failed or dropped; removed once it reaches the front.
        package var done = false

        package var bytes: Int { self.delivery.body.utf8.count + self.delivery.originalBody.utf8.count + 256 }
    }

    /// What the worker should do next.
    package enum Next: Equatable, Sendable {
        case deliver([Delivery])
        /// Nothing can go now; the earliest backoff ends then.
        case wait(until: Instant)
        /// Nothing to do until something is appended or the transport becomes available.
        case idle
    }

    /// A dead letter made by ``finished(_:results:now:)`` or ``bounced(relayID:permanent:reason:now:sequence:)``.
    package struct DeadLetter: Equatable, Sendable {
        package var delivery: Delivery
        package var attempts: Int
        package var reason: String

        package init(delivery: Delivery, attempts: Int, reason: String) {
            self.delivery = delivery
            self.attempts = attempts
            self.reason = reason
        }
    }

    /// What a batch's results or a bounce changed: the journal entries to write, and the
    /// dead letters made (for logs and counters).
    package struct Outcome: Sendable {
        package var entries: [JournalEntry] = []
        package var deadLetters: [DeadLetter] = []
        package var delivered = 0
        package var retried = 0
    }

    package let configuration: Configuration
    /// Grown on demand: most accounts' queues are empty (16 items would be 4 KiB each).
    package private(set) var items = CircularBuffer<Item>(initialCapacity: 1)
    package private(set) var count = 0
    package private(set) var bytes = 0
    package private(set) var isAvailable = false
    /// Sequences of every batch in flight, and how many batches that is.
    private var inFlight: Set<Int64> = []
    private var batchCount = 0
    private var recent: [String: Item] = [:]
    /// Bounces that arrived while their delivery was still in flight (a server answers an
    /// error before the acknowledgement or round trip): applied when the batch's results come.
    private var earlyBounces: [String: (permanent: Bool, reason: String)] = [:]
    /// Targets reported ready while a batch was in flight: a "wait for target" answer in
    /// that batch is already out of date.
    private var readyWhileInFlight: Set<Endpoint> = []
    private var recentOrder = CircularBuffer<String>(initialCapacity: 1)

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: Intake

    /// Whether `deliveries` fit under the limits now; an empty queue takes anything, so a
    /// single oversize batch cannot wait for ever.
    package func hasRoom(for deliveries: [Delivery]) -> Bool {
        guard self.count > 0 else { return true }
        let size = deliveries.reduce(0) { $0 + Item(delivery: $1, enqueuedAt: Date(), attempts: 0).bytes }
        return self.count + deliveries.count <= self.configuration.maxRows && self.bytes + size <= self.configuration.maxBytes
    }

    /// Appends committed deliveries (in sequence order).
    package mutating func append(_ delivery: Delivery, enqueuedAt: Date, attempts: Int = 0, notBefore: Instant? = nil, lastError: String? = nil) {
        let item = Item(delivery: delivery, enqueuedAt: enqueuedAt, attempts: attempts, notBefore: notBefore, lastError: lastError)
        self.count += 1
        self.bytes += item.bytes
        self.items.append(item)
    }

    package mutating func setAvailable(_ available: Bool) {
        self.isAvailable = available
    }

    // MARK: Taking batches

    /// The next batch to hand to the transport, or why there is none.
    package mutating func next(now: Instant) -> Next {
        guard self.isAvailable, self.batchCount < max(1, self.configuration.batchesInFlight) else { return .idle }
        var batch: [Delivery] = []
        var blocked: Set<Endpoint> = []
        var earliest: Instant?
        var index = self.items.startIndex
        while index != self.items.endIndex, batch.count < self.configuration.batchSize {
            let item = self.items[index]
            defer { index = self.items.index(after: index) }
            if item.done || item.inFlight || blocked.contains(item.delivery.target) { continue }
            if let notBefore = item.notBefore, notBefore > now {
                blocked.insert(item.delivery.target)
                earliest = earliest.map { min($0, notBefore) } ?? notBefore
                continue
            }
            self.items[index].inFlight = true
            batch.append(item.delivery)
            self.inFlight.insert(item.delivery.sequence)
        }
        if !batch.isEmpty {
            self.batchCount += 1
            return .deliver(batch)
        }
        return earliest.map { .wait(until: $0) } ?? .idle
    }

    /// The transport's answers for one batch in flight, in order.
    package mutating func finished(_ batch: [Delivery], results: [DeliveryResult], now: Instant) -> Outcome {
        var outcome = Outcome()
        var counted = false
        let positions = self.positions(of: batch)
        for (offset, delivery) in batch.enumerated() {
            guard let index = positions[delivery.sequence] else { continue }
            self.items[index].inFlight = false
            // Dropped or taken meanwhile: its answer is ignored (and it can leave the front).
            guard !self.items[index].done else { continue }
            var result = offset < results.count ? results[offset] : .retryLater("the transport gave no answer")
            if case .delivered = result, let bounce = self.earlyBounces.removeValue(forKey: delivery.relayID) {
                result = bounce.permanent ? .failed(bounce.reason) : .retryLater(bounce.reason)
                if !bounce.permanent {
                    // Charged even when not first: it was the target, not the link, that refused.
                    outcome.retried += 1
                    self.charge(at: index, reason: bounce.reason, now: now, into: &outcome)
                    continue
                }
            }
            switch result {
            case .delivered:
                self.remember(self.items[index])
                self.markDone(at: index)
                outcome.entries.append(.complete(sequence: delivery.sequence))
                outcome.delivered += 1
            case .failed(let reason):
                self.kill(at: index, reason: reason, into: &outcome)
            case .waitForTarget(let reason):
                // The target, not the delivery: held without counting an attempt, until the
                // transport says the target is ready (or the recheck comes).
                self.items[index].lastError = reason
                let ready = self.readyWhileInFlight.contains(delivery.target)
                self.items[index].notBefore = ready ? nil : now.advanced(by: self.configuration.targetRecheck)
            case .retryLater(let reason):
                // Only the first delivery the attempt stopped at is charged with it.
                guard !counted else { continue }
                counted = true
                outcome.retried += 1
                self.charge(at: index, reason: reason, now: now, into: &outcome)
            }
        }
        for delivery in batch {
            self.inFlight.remove(delivery.sequence)
            self.earlyBounces.removeValue(forKey: delivery.relayID)
        }
        self.batchCount = max(0, self.batchCount - 1)
        if self.batchCount == 0 {
            self.inFlight.removeAll()
            self.earlyBounces.removeAll()
            self.readyWhileInFlight.removeAll()
        }
        self.trimFront()
        return outcome
    }

    /// A bounce (RFC 6120 §8.3) of a delivery the server had accepted: a transient one
    /// queues it again (as `sequence`) after a backoff, a permanent one makes it a dead
    /// letter. Nil when the relay id is not one of ours recently delivered.
    package mutating func bounced(relayID: String, permanent: Bool, reason: String, now: Instant, sequence: Int64) -> Outcome? {
        if self.items.contains(where: { $0.inFlight && $0.delivery.relayID == relayID }) {
            self.earlyBounces[relayID] = (permanent, reason)
            return Outcome()
        }
        guard var item = self.recent.removeValue(forKey: relayID) else { return nil }
        item.done = false
        item.inFlight = false
        var outcome = Outcome()
        if permanent {
            outcome.deadLetters.append(DeadLetter(delivery: item.delivery, attempts: item.attempts + 1, reason: reason))
            outcome.entries.append(.deadLetter(item.delivery, enqueuedAt: item.enqueuedAt, attempts: item.attempts + 1, reason: reason))
            return outcome
        }
        item.delivery.sequence = sequence
        item.attempts += 1
        if item.attempts >= self.configuration.maxAttempts {
            let why = "gave up after \(item.attempts) attempts: \(reason)"
            outcome.deadLetters.append(DeadLetter(delivery: item.delivery, attempts: item.attempts, reason: why))
            outcome.entries.append(.deadLetter(item.delivery, enqueuedAt: item.enqueuedAt, attempts: item.attempts, reason: why))
            return outcome
        }
        outcome.retried += 1
        outcome.entries.append(.enqueue(item.delivery, enqueuedAt: item.enqueuedAt, attempts: item.attempts))
        self.append(item.delivery, enqueuedAt: item.enqueuedAt, attempts: item.attempts, notBefore: now.advanced(by: self.backoff(after: item.attempts)), lastError: reason)
        return outcome
    }

    /// Deliveries the target took before a restart (learnt on resuming its session): they
    /// are done; an answer still in flight for one of them is ignored.
    package mutating func acknowledged(relayIDs: Set<String>) -> Outcome {
        var outcome = Outcome()
        var index = self.items.startIndex
        while index != self.items.endIndex {
            if !self.items[index].done, relayIDs.contains(self.items[index].delivery.relayID) {
                self.markDone(at: index)
                outcome.entries.append(.complete(sequence: self.items[index].delivery.sequence))
                outcome.delivered += 1
            }
            index = self.items.index(after: index)
        }
        self.trimFront()
        return outcome
    }

    /// `target` can take deliveries again: what waits for it goes now. False when none waits.
    package mutating func targetReady(_ target: Endpoint) -> Bool {
        var found = false
        if !self.inFlight.isEmpty, self.items.contains(where: { $0.inFlight && $0.delivery.target == target }) {
            self.readyWhileInFlight.insert(target)
            found = true
        }
        var index = self.items.startIndex
        while index != self.items.endIndex {
            if !self.items[index].done, self.items[index].notBefore != nil, self.items[index].delivery.target == target {
                self.items[index].notBefore = nil
                found = true
            }
            index = self.items.index(after: index)
        }
        return found
    }

    // MARK: Operator actions

    /// Makes a waiting delivery eligible now. False if it is not queued.
    package mutating func retryNow(_ sequence: Int64) -> Bool {
        guard let index = self.index(of: sequence) else { return false }
        self.items[index].notBefore = nil
        return true
    }

    /// Forgets a queued delivery (`queue drop`); an answer for it still in flight is ignored.
    package mutating func drop(_ sequence: Int64) -> Bool {
        guard let index = self.index(of: sequence) else { return false }
        self.markDone(at: index)
        self.trimFront()
        return true
    }

    // MARK: Inspection

    /// Queued deliveries in order (not yet delivered).
    package var pending: [Item] { self.items.filter { !$0.done } }

    package var oldest: Date? { self.items.first { !$0.done }?.enqueuedAt }

    package var isEmpty: Bool { self.count == 0 }

    /// The wait before the next attempt after `attempts` failed ones.
    package func backoff(after attempts: Int) -> Duration {
        var delay = self.configuration.retryInitialDelay
        var step = 1
        while step < attempts, delay < self.configuration.retryMaximumDelay {
            delay *= 2
            step += 1
        }
        return min(delay, self.configuration.retryMaximumDelay)
    }

    // MARK: -

    /// When each of `sequences` was queued (those still held); the in-flight batch is at the
    /// front, so this stops early for it.
    package func enqueuedTimes(of sequences: Set<Int64>) -> [Int64: Date] {
        var found: [Int64: Date] = [:]
        for item in self.items where sequences.contains(item.delivery.sequence) {
            found[item.delivery.sequence] = item.enqueuedAt
            if found.count == sequences.count { break }
        }
        return found
    }

    /// Where each item of `batch` is, still in flight (done or not): one pass that stops once
    /// all are found (batches sit near the front), where a search per item would pass the
    /// batch's finished items again and again (quadratic in the batch size).
    private func positions(of batch: [Delivery]) -> [Int64: CircularBuffer<Item>.Index] {
        let wanted = Set(batch.map(\.sequence))
        var positions: [Int64: CircularBuffer<Item>.Index] = [:]
        positions.reserveCapacity(wanted.count)
        var index = self.items.startIndex
        while index != self.items.endIndex, positions.count < wanted.count {
            let item = self.items[index]
            if item.inFlight, wanted.contains(item.delivery.sequence) { positions[item.delivery.sequence] = index }
            index = self.items.index(after: index)
        }
        return positions
    }

    private func index(of sequence: Int64) -> CircularBuffer<Item>.Index? {
        self.items.firstIndex { $0.delivery.sequence == sequence && !$0.done }
    }

    private mutating func charge(at index: CircularBuffer<Item>.Index, reason: String, now: Instant, into outcome: inout Outcome) {
        self.items[index].attempts += 1
        self.items[index].lastError = reason
        let item = self.items[index]
        if item.attempts >= self.configuration.maxAttempts {
            self.kill(at: index, reason: "gave up after \(item.attempts) attempts: \(reason)", into: &outcome)
            return
        }
        self.items[index].notBefore = now.advanced(by: self.backoff(after: item.attempts))
        outcome.entries.append(.attempted(sequence: item.delivery.sequence, attempts: item.attempts, error: reason))
    }

    private mutating func kill(at index: CircularBuffer<Item>.Index, reason: String, into outcome: inout Outcome) {
        let item = self.items[index]
        let attempts = max(item.attempts, 1)
        self.markDone(at: index)
        outcome.deadLetters.append(DeadLetter(delivery: item.delivery, attempts: attempts, reason: reason))
        outcome.entries.append(.deadLetter(item.delivery, enqueuedAt: item.enqueuedAt, attempts: attempts, reason: reason))
    }

    private mutating func markDone(at index: CircularBuffer<Item>.Index) {
        guard !self.items[index].done else { return }
        self.items[index].done = true
        self.count -= 1
        self.bytes -= self.items[index].bytes
    }

    private mutating func trimFront() {
        while let first = self.items.first, first.done, !first.inFlight {
            self.items.removeFirst()
        }
    }

    private mutating func remember(_ item: Item) {
        guard self.configuration.bounceWindow > 0 else { return }
        let relayID = item.delivery.relayID
        self.recent[relayID] = item
        self.recentOrder.append(relayID)
        while self.recentOrder.count > self.configuration.bounceWindow {
            self.recent.removeValue(forKey: self.recentOrder.removeFirst())
        }
    }
}
