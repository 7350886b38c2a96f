import BridgeState
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import TransportCore

/// The single writer of the relay's durable state (queue, id map, dead letters), with
/// group commit: entries from every caller are collected, and one thread writes all that
/// arrived since the last commit in one SQLite transaction. While a transaction runs, the
/// next group gathers, so a busy bridge commits less often per message, never more.
///
/// With an intake log (``IntakeLogFile``, the daemon's default), entries are durable the
/// moment they are copied into it, on the caller's thread: ``commit(_:)`` and
/// ``append(_:completion:)`` answer at once, and the SQLite commit that applies them
/// happens off the relay path, for everything gathered in ``lazyDelay`` (or sooner once
/// ``applyBatch`` entries wait). A message's one durable write is then a memory copy, and
/// neither its source nor its target waits for the journal's thread. After `kill -9` the
/// records not yet applied are applied when the journal opens; the database records how
/// far it has applied the log in the same transaction, so none is applied twice. Taking a
/// group turns the log to its other half, so a busy bridge keeps logging while a commit
/// runs. When both halves are full, entries wait for their SQLite commit as without a log.
///
/// Without a log (in-memory state, tests), ``commit(_:)`` returns once the transaction
/// that holds its entries is committed; ``record(_:)`` adds entries without waiting, and
/// ``recordLazily(_:)`` without starting a commit of their own: completions ride the next
/// commit that happens anyway, or one after ``lazyDelay`` at the latest. A completion lost
/// in a crash means at most a repeated delivery, and for XMPP targets not even that: the
/// stream ledger knows what the server acknowledged (``StreamLedgerFile``).
///
/// The writer runs on its own thread (an `NIOThreadPool` of one), never on the Swift
/// cooperative pool or an event loop. Sequences are assigned here, in memory, so callers
/// never read back what they wrote.
package final class Journal: Sendable {
    package typealias Completion = @Sendable (Result<Void, any Error>) -> Void
    package typealias Position = IntakeLogFile.Position

    private struct Pending {
        /// Handed over, not yet applied to SQLite, in order.
        var entries: [JournalEntry] = []
        /// How many of `entries` ride along (``JournalEntry/ridesAlong``): not counted
        /// towards ``applyBatch``.
        var riders = 0
        /// How many of the first `entries` are in the intake log (durable already); the
        /// others wait for their SQLite commit.
        var logged = 0
        /// The intake log position of the last logged entry.
        var loggedThrough: Position?
        /// Unlogged entries in the commit under way: not durable until it ends.
        var unloggedInFlight = 0
        /// A group did not fit: nothing more goes into the log until every unlogged entry is
        /// committed (so a logged entry never follows one that is not durable).
        var logFull = false
        var timerArmed = false
        var waiters: [Completion] = []
        var flushing = false
        var nextSequence: Int64
        /// The last sequence of this instance's block (``SharedQueue``); nil: no blocks, one
        /// writer numbers alone.
        var blockEnd: Int64?
        var commits = 0
        /// Commits tried again in a row after a transient failure.
        var retries = 0
    }

    private let store: any StateStore
    /// Where blocks of sequences come from when several instances share the queue.
    private let sharedQueue: (any SharedQueue)?
    private let thread: NIOThreadPool
    private let pending: NIOLockedValueBox<Pending>
    private let logger: Logger
    private let log: IntakeLogFile?

    /// Checkpoints the WAL off this thread (nil: SQLite's automatic checkpoints, in memory).
    private let checkpointer: WALCheckpointer?
    /// How long entries that need no commit of their own wait for one (logged entries,
    /// completions) before they get one.
    package let lazyDelay: Duration
    /// Logged entries waiting that start a commit at once.
    package static let applyBatch = 512
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Where the timer runs (an event loop with ``EventLoopClock``: no other thread wakes).
    private let timerExecutor: (any TaskExecutor)?

    /// Opens the journal over `store`; with `log`, first applies what an earlier process
    /// left in it unapplied.
    package init<C: Clock>(
        store: any StateStore, log: IntakeLogFile? = nil, checkpointer: WALCheckpointer? = nil, lazyDelay: Duration = .milliseconds(50),
        clock: C = ContinuousClock(), timerExecutor: (any TaskExecutor)? = nil, sharedQueue: (any SharedQueue)? = nil, logger: Logger
    ) throws(StateStoreError) where C.Duration == Duration {
        self.store = store
        self.sharedQueue = sharedQueue
        self.log = log
        self.checkpointer = checkpointer
        self.lazyDelay = lazyDelay
        self.sleep = { duration in try await clock.sleep(for: duration) }
        self.timerExecutor = timerExecutor
        self.logger = logger
        if let log { try Self.replay(log, into: store, logger: logger) }
        if let sharedQueue {
            let first = try sharedQueue.reserveSequences(Self.sequenceBlock)
            self.pending = NIOLockedValueBox(Pending(nextSequence: first, blockEnd: first + Self.sequenceBlock - 1))
        } else {
            self.pending = NIOLockedValueBox(Pending(nextSequence: try store.lastSequence() + 1))
        }
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
    }

    /// Applies the records `log` holds after the position SQLite has applied through (a
    /// process ended before applying them), in one transaction with the new position, then
    /// empties the log. A valid record that cannot be decoded (another version) is an error
    /// that leaves the log as it is: nothing acknowledged is thrown away.
    package static func replay(_ log: IntakeLogFile, into store: any StateStore, logger: Logger) throws(StateStoreError) {
        let records = log.records(after: try store.intakeApplied())
        var entries: [JournalEntry] = []
        for (index, record) in records.enumerated() {
            do {
                entries += try record.payload.withUnsafeBytes { bytes in try JournalEntryCodec.decode(bytes) }
            } catch {
                throw StateStoreError(
                    operation: .replayIntakeLog, location: log.path,
                    underlying: "record \(index) of \(records.count) cannot be read (\(error)); the log is left as it is"
                )
            }
        }
        if let last = records.last?.position {
            try store.apply(entries, intakeThrough: last, as: .replayIntakeLog)
            logger.notice("applied what the intake log held from before", metadata: ["records": "\(records.count)", "entries": "\(entries.count)"])
        }
        log.reset()
    }

    /// Stops the writer thread after the entries already handed over are written.
    package func shutdown() async {
        await self.flushed()
        try? await self.thread.shutdownGracefully()
        await self.checkpointer?.shutdown()
    }

    /// The next `count` queue sequences, increasing and never reused. With a shared queue
    /// they come from this instance's block; a block used up is followed by a new one
    /// (reserved here, on the caller's thread: once per ``sequenceBlock`` deliveries). Nil
    /// when no new block can be had (the database out of reach).
    package func assignSequences(_ count: Int) -> ClosedRange<Int64>? {
        guard count > 0 else { return nil }
        let exhausted = self.pending.withLockedValue { pending in pending.blockEnd.map { pending.nextSequence + Int64(count) - 1 > $0 } ?? false }
        if exhausted {
            guard let sharedQueue = self.sharedQueue, let first = try? sharedQueue.reserveSequences(max(Self.sequenceBlock, Int64(count))) else {
                self.logger.error("cannot reserve queue sequences; the state database is out of reach")
                return nil
            }
            self.pending.withLockedValue { pending in
                pending.nextSequence = first
                pending.blockEnd = first + max(Self.sequenceBlock, Int64(count)) - 1
            }
        }
        return self.pending.withLockedValue { pending in
            let first = pending.nextSequence
            pending.nextSequence += Int64(count)
            return first...(first + Int64(count) - 1)
        }
    }

    /// Sequences reserved at once by an instance sharing the queue.
    package static var sequenceBlock: Int64 { 1 << 20 }

    /// Moves this instance on to a new block of sequences, past every one used so far by
    /// any instance: done as it takes a transport over, so what it queues from then on
    /// sorts after what the previous owner queued.
    package func startSequenceBlock() async throws(StateStoreError) {
        guard let sharedQueue = self.sharedQueue else { return }
        let first = try await self.read { _ throws(StateStoreError) in try sharedQueue.reserveSequences(Self.sequenceBlock) }
        self.pending.withLockedValue { pending in
            pending.nextSequence = first
            pending.blockEnd = first + Self.sequenceBlock - 1
        }
    }

    /// Makes `entries` durable and returns then: at once when they went into the intake
    /// log, else once their group commit is done.
    package func commit(_ entries: [JournalEntry]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.append(entries) { continuation.resume(with: $0) }
        }
    }

    /// Makes `entries` durable; `completion` runs once they are, in the order entries were
    /// appended: on the caller's thread before this returns when they went into the intake
    /// log, else on the journal's thread once their commit is done (or failed).
    package func append(_ entries: [JournalEntry], completion: @escaping Completion) {
        self.handOver(entries, lazily: false, completion: completion)
    }

    /// Entries handed over and not yet applied (for intake backpressure).
    package var backlog: Int { self.pending.withLockedValue { $0.entries.count } }

    /// Makes `entries` durable without waiting for it.
    package func record(_ entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        self.handOver(entries, lazily: false, completion: nil)
    }

    /// Writes `entries` with the next commit that happens anyway, or after ``lazyDelay`` at
    /// the latest, without starting one now (in the intake log at once when there is one).
    package func recordLazily(_ entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        self.handOver(entries, lazily: true, completion: nil)
    }

    /// Into the intake log if it has room, and into the next group. A commit starts now for
    /// entries that are not logged and not lazy, or once many wait; else the timer starts
    /// one after ``lazyDelay``.
    private func handOver(_ entries: [JournalEntry], lazily: Bool, completion: Completion?) {
        // Encoded and summed before taking the locks; copied into the log under them, so
        // the log's order is the order of `pending.entries`.
        let record = self.log != nil && !entries.isEmpty ? JournalEntryCodec.encode(entries) : nil
        let checksum = record.map(IntakeLogFile.checksum)
        let (logged, start, arm, full) = self.pending.withLockedValue { pending -> (Bool, Bool, Bool, Bool) in
            var logged = false
            var full = false
            if let record, let checksum, let log = self.log, !pending.logFull {
                if let position = log.append(record, checksum: checksum) {
                    logged = true
                    pending.loggedThrough = position
                } else {
                    pending.logFull = true
                    full = true
                }
            }
            pending.entries += entries
            pending.riders += entries.count { $0.ridesAlong }
            if logged { pending.logged = pending.entries.count }
            if !logged, let completion { pending.waiters.append(completion) }
            let now = (!logged && !lazily) || pending.entries.count - pending.riders >= Self.applyBatch
            if now, Self.claimFlush(&pending) { return (logged, true, false, full) }
            guard !now, !pending.timerArmed, !pending.entries.isEmpty else { return (logged, false, false, full) }
            pending.timerArmed = true
            return (logged, false, true, full)
        }
        if full, let log = self.log {
            self.logger.warning("intake log full; entries wait for their commit until it has room", metadata: ["path": "\(log.path)"])
        }
        if logged { completion?(.success(())) }
        if start { self.startFlushing() }
        if arm { self.armTimer() }
    }

    /// One commit after ``lazyDelay`` for what waits then.
    /// How long a group waits after a transient failure before it is tried again.
    package static var retryDelay: Duration { .seconds(1) }

    private func armTimer(after delay: Duration? = nil) {
        Task(executorPreference: self.timerExecutor) {
            try? await self.sleep(delay ?? self.lazyDelay)
            let start = self.pending.withLockedValue { pending -> Bool in
                pending.timerArmed = false
                return !pending.entries.isEmpty && Self.claimFlush(&pending)
            }
            if start { self.startFlushing() }
        }
    }

    /// Runs `body` on the journal's thread, after everything handed over so far is applied
    /// (the thread runs its work in order, and applies what the log holds first): lookups
    /// in the id map never run on an event loop, and see what was relayed just before.
    package func read<T: Sendable>(_ body: @escaping @Sendable (any StateStore) throws(StateStoreError) -> T) async throws(StateStoreError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StateStoreError>, Never>) in
            self.thread.submit { state in
                guard case .active = state else {
                    continuation.resume(returning: .failure(StateStoreError(operation: .readRelays, location: self.store.location, underlying: "the journal is shut down")))
                    return
                }
                self.flush()
                do throws(StateStoreError) {
                    continuation.resume(returning: .success(try body(self.store)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Returns once everything handed over so far is applied to SQLite (or failed).
    package func flushed() async {
        try? await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let start = self.pending.withLockedValue { pending -> Bool in
                pending.waiters.append { continuation.resume(with: $0) }
                return Self.claimFlush(&pending)
            }
            if start { self.startFlushing() }
        }
    }

    /// Returns once everything handed over so far is durable: at once when all of it is in
    /// the intake log, else once it is committed (also what a commit under way holds).
    package func durable() async {
        let waits = self.pending.withLockedValue { $0.entries.count > $0.logged || $0.unloggedInFlight > 0 || !$0.waiters.isEmpty }
        if waits { await self.flushed() }
    }

    /// How many transactions the journal has committed (for benchmarks and tests).
    package var commitCount: Int { self.pending.withLockedValue { $0.commits } }

    private static func claimFlush(_ pending: inout Pending) -> Bool {
        guard !pending.flushing else { return false }
        pending.flushing = true
        return true
    }

    private func startFlushing() {
        self.thread.submit { state in
            guard case .active = state else {
                self.failAll(StateStoreError(operation: .enqueue, location: self.store.location, underlying: "the journal is shut down"))
                return
            }
            self.flush()
        }
    }

    /// One group taken for a commit.
    private struct Batch {
        var entries: [JournalEntry]
        /// How many of the first entries are logged, and the log position of the last.
        var logged: Int
        var loggedThrough: Position?
        var waiters: [Completion]
    }

    /// Writes groups until nothing is pending. Taking a group turns the intake log to its
    /// other half, so the half being committed is emptied once applied.
    private func flush() {
        while true {
            let batch = self.pending.withLockedValue { pending -> Batch in
                defer {
                    pending.entries.removeAll(keepingCapacity: true)
                    pending.riders = 0
                    pending.waiters.removeAll(keepingCapacity: true)
                    pending.logged = 0
                }
                if pending.entries.isEmpty, pending.waiters.isEmpty { pending.flushing = false }
                pending.unloggedInFlight = pending.entries.count - pending.logged
                if pending.logged > 0 { self.log?.rotate() }
                return Batch(
                    entries: pending.entries, logged: pending.logged, loggedThrough: pending.logged > 0 ? pending.loggedThrough : nil,
                    waiters: pending.waiters
                )
            }
            if batch.entries.isEmpty, batch.waiters.isEmpty { return }
            let failure = batch.entries.isEmpty ? nil : self.commit(batch)
            if let failure = failure as? StateStoreError, failure.transient, self.log == nil {
                // The database is out of reach (a restart, a failover): the group goes back
                // in front, its waiters still waiting, and is tried again shortly. Intake
                // waits meanwhile (backpressure); nothing is dropped.
                self.pending.withLockedValue { pending in
                    pending.entries = batch.entries + pending.entries
                    pending.riders += batch.entries.count { $0.ridesAlong }
                    pending.waiters = batch.waiters + pending.waiters
                    pending.flushing = false
                    pending.timerArmed = true
                    pending.retries += 1
                }
                self.armTimer(after: Self.retryDelay)
                return
            }
            self.pending.withLockedValue { $0.retries = 0 }
            for waiter in batch.waiters { waiter(failure.map { .failure($0) } ?? .success(())) }
            if failure != nil, batch.logged > 0, !self.applyOneByOne(batch) {
                // Not applied at all (the disk?): kept, in front, and tried again later.
                self.pending.withLockedValue { pending in
                    pending.entries = Array(batch.entries[..<batch.logged]) + pending.entries
                    pending.riders += batch.entries[..<batch.logged].count { $0.ridesAlong }
                    pending.logged += batch.logged
                    if pending.loggedThrough.map({ $0 < batch.loggedThrough! }) ?? true { pending.loggedThrough = batch.loggedThrough }
                    pending.flushing = false
                    pending.timerArmed = true
                }
                self.armTimer()
                return
            }
        }
    }

    /// Applies `batch` with the log position it reaches; nil when committed.
    private func commit(_ batch: Batch) -> (any Error)? {
        do {
            try self.store.apply(batch.entries, intakeThrough: batch.loggedThrough)
        } catch {
            if error.transient, self.log == nil {
                let retries = self.pending.withLockedValue { $0.retries }
                if retries % 30 == 0 {
                    self.logger.warning("state database out of reach; the journal waits and tries again", metadata: ["error": "\(error)", "entries": "\(batch.entries.count)", "tries": "\(retries + 1)"])
                }
            } else {
                self.logger.error("journal commit failed", metadata: ["error": "\(error)", "entries": "\(batch.entries.count)"])
            }
            self.pending.withLockedValue { $0.unloggedInFlight = 0 }
            return error
        }
        if let position = batch.loggedThrough { self.log?.applied(through: position) }
        self.pending.withLockedValue { pending in
            pending.commits += 1
            pending.unloggedInFlight = 0
            if pending.logFull, pending.entries.isEmpty { pending.logFull = false }
        }
        self.checkpointer?.commitsHappened(1)
        return nil
    }

    /// After a failed commit, the logged entries (their sources were answered already) one
    /// by one, each in a savepoint: one that cannot be applied is dropped with an error line
    /// instead of holding back all after it. False when even that transaction fails.
    private func applyOneByOne(_ batch: Batch) -> Bool {
        do {
            try self.store.applyEach(batch.entries[..<batch.logged], intakeThrough: batch.loggedThrough) { entry, error in
                self.logger.error("journal entry dropped: it cannot be applied", metadata: ["entry": "\(entry)", "error": "\(error)"])
            }
        } catch {
            self.logger.error("journal commit failed again; logged entries kept for a later try", metadata: ["error": "\(error)"])
            return false
        }
        if let position = batch.loggedThrough { self.log?.applied(through: position) }
        self.pending.withLockedValue { $0.commits += 1 }
        return true
    }

    private func failAll(_ error: any Error) {
        let waiters = self.pending.withLockedValue { pending -> [Completion] in
            defer {
                pending.waiters.removeAll()
                pending.entries.removeAll()
                pending.riders = 0
                pending.logged = 0
                pending.flushing = false
            }
            return pending.waiters
        }
        for waiter in waiters { waiter(.failure(error)) }
    }
}
