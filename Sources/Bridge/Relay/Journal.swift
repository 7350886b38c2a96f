import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import TransportCore
import Transports

/// The single writer of the relay's durable state (queue, id map, dead letters), with
/// group commit: entries from every caller are collected, and one thread writes all that
/// arrived since the last commit in one SQLite transaction. While a transaction runs, the
/// next group gathers, so a busy bridge commits less often per message, never more.
///
/// ``commit(_:)`` returns once the transaction that holds its entries is committed: that is
/// the bridge's point of durability, before which no source is acknowledged.
/// ``record(_:)`` adds entries without waiting (attempt counts, dead letters), and
/// ``recordLazily(_:)`` without starting a commit of their own: completions ride the next
/// commit that happens anyway, or one after ``lazyDelay`` at the latest. A completion lost
/// in a crash means at most a repeated delivery, and for XMPP targets not even that: the
/// stream ledger knows what the server acknowledged (``StreamLedgerFile``).
///
/// The writer runs on its own thread (an `NIOThreadPool` of one), never on the Swift
/// cooperative pool or an event loop. Sequences are assigned here, in memory, so callers
/// never read back what they wrote.
final class Journal: Sendable {
    typealias Completion = @Sendable (Result<Void, any Error>) -> Void

    private struct Pending {
        var entries: [JournalEntry] = []
        /// Entries for the next commit, which they do not start (``recordLazily(_:)``).
        var lazy: [JournalEntry] = []
        var lazyTimerArmed = false
        var waiters: [Completion] = []
        var flushing = false
        var nextSequence: Int64
        var commits = 0
    }

    private let store: StateStore
    private let thread: NIOThreadPool
    private let pending: NIOLockedValueBox<Pending>
    private let logger: Logger

    /// Checkpoints the WAL off this thread (nil: SQLite's automatic checkpoints, in memory).
    private let checkpointer: WALCheckpointer?
    /// How long lazily recorded entries wait for a commit to ride before they get their own.
    let lazyDelay: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Where the lazy timer runs (an event loop with ``EventLoopClock``: no other thread wakes).
    private let timerExecutor: (any TaskExecutor)?

    init<C: Clock>(
        store: StateStore, checkpointer: WALCheckpointer? = nil, lazyDelay: Duration = .milliseconds(50), clock: C = ContinuousClock(),
        timerExecutor: (any TaskExecutor)? = nil, logger: Logger
    ) throws(StateStoreError) where C.Duration == Duration {
        self.store = store
        self.checkpointer = checkpointer
        self.lazyDelay = lazyDelay
        self.sleep = { duration in try await clock.sleep(for: duration) }
        self.timerExecutor = timerExecutor
        self.logger = logger
        self.pending = NIOLockedValueBox(Pending(nextSequence: try store.lastSequence() + 1))
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
    }

    /// Stops the writer thread after the entries already handed over are written.
    func shutdown() async {
        await self.flushed()
        try? await self.thread.shutdownGracefully()
        await self.checkpointer?.shutdown()
    }

    /// The next `count` queue sequences, increasing and never reused.
    func assignSequences(_ count: Int) -> ClosedRange<Int64>? {
        guard count > 0 else { return nil }
        return self.pending.withLockedValue { pending in
            let first = pending.nextSequence
            pending.nextSequence += Int64(count)
            return first...(first + Int64(count) - 1)
        }
    }

    /// Writes `entries` in the next group commit and returns once it is committed.
    func commit(_ entries: [JournalEntry]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.append(entries) { continuation.resume(with: $0) }
        }
    }

    /// Writes `entries` in the next group commit; `completion` runs on the journal's thread
    /// once that commit is done (or failed), in the order entries were appended.
    func append(_ entries: [JournalEntry], completion: @escaping Completion) {
        let start = self.pending.withLockedValue { pending -> Bool in
            pending.entries += entries
            pending.waiters.append(completion)
            return Self.claimFlush(&pending)
        }
        if start { self.startFlushing() }
    }

    /// Entries handed over and not yet committed (for intake backpressure).
    var backlog: Int { self.pending.withLockedValue { $0.entries.count } }

    /// Writes `entries` in the next group commit without waiting for it.
    func record(_ entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        let start = self.pending.withLockedValue { pending -> Bool in
            pending.entries += entries
            return Self.claimFlush(&pending)
        }
        if start { self.startFlushing() }
    }

    /// Writes `entries` with the next commit that happens anyway, or after ``lazyDelay`` at
    /// the latest, without starting one now.
    func recordLazily(_ entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        let arm = self.pending.withLockedValue { pending -> Bool in
            pending.lazy += entries
            guard !pending.lazyTimerArmed else { return false }
            pending.lazyTimerArmed = true
            return true
        }
        guard arm else { return }
        Task(executorPreference: self.timerExecutor) {
            try? await self.sleep(self.lazyDelay)
            let start = self.pending.withLockedValue { pending -> Bool in
                pending.lazyTimerArmed = false
                return !pending.lazy.isEmpty && Self.claimFlush(&pending)
            }
            if start { self.startFlushing() }
        }
    }

    /// Runs `body` on the journal's thread, after the commits of everything handed over
    /// so far (the thread runs its work in order): lookups in the id map never run on an
    /// event loop, and see what was relayed just before.
    func read<T: Sendable>(_ body: @escaping @Sendable (StateStore) throws(StateStoreError) -> T) async throws(StateStoreError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StateStoreError>, Never>) in
            self.thread.submit { state in
                guard case .active = state else {
                    continuation.resume(returning: .failure(StateStoreError(operation: .readRelays, location: self.store.location, underlying: "the journal is shut down")))
                    return
                }
                do throws(StateStoreError) {
                    continuation.resume(returning: .success(try body(self.store)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Returns once everything handed over so far is committed (or failed).
    func flushed() async {
        try? await self.commit([])
    }

    /// How many transactions the journal has committed (for benchmarks and tests).
    var commitCount: Int { self.pending.withLockedValue { $0.commits } }

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

    /// Writes groups until nothing is pending.
    private func flush() {
        while true {
            let (entries, waiters) = self.pending.withLockedValue { pending -> ([JournalEntry], [Completion]) in
                defer {
                    pending.entries.removeAll(keepingCapacity: true)
                    pending.lazy.removeAll(keepingCapacity: true)
                    pending.waiters.removeAll(keepingCapacity: true)
                }
                if pending.entries.isEmpty, pending.lazy.isEmpty, pending.waiters.isEmpty { pending.flushing = false }
                // Lazy entries first: they were recorded before what now starts the commit.
                return (pending.lazy.isEmpty ? pending.entries : pending.lazy + pending.entries, pending.waiters)
            }
            if entries.isEmpty, waiters.isEmpty { return }
            var failure: (any Error)?
            if !entries.isEmpty {
                do {
                    try self.store.write(.enqueue) { db in try Self.apply(entries, in: db) }
                    self.pending.withLockedValue { $0.commits += 1 }
                    self.checkpointer?.commitsHappened(1)
                } catch {
                    self.logger.error("journal commit failed", metadata: ["error": "\(error)", "entries": "\(entries.count)"])
                    failure = error
                }
            }
            let result: Result<Void, any Error> = failure.map { .failure($0) } ?? .success(())
            for waiter in waiters { waiter(result) }
        }
    }

    private func failAll(_ error: any Error) {
        let waiters = self.pending.withLockedValue { pending -> [Completion] in
            defer {
                pending.waiters.removeAll()
                pending.entries.removeAll()
                pending.flushing = false
            }
            return pending.waiters
        }
        for waiter in waiters { waiter(.failure(error)) }
    }

    /// One transaction's statements, prepared once per connection and reused. Of several
    /// session states or checkpoints for one account in a group, only the last is written.
    private static func apply(_ entries: [JournalEntry], in db: Database) throws {
        var lastSession: [String: Int] = [:]
        var lastCheckpoint: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .streamSession(let transport, _): lastSession[transport] = index
            case .checkpoint(let transport, _): lastCheckpoint[transport] = index
            default: break
            }
        }
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .enqueue(let delivery, let enqueuedAt, let attempts):
                try db.cachedStatement(sql: """
                    INSERT INTO queue (sequence, channel, target_transport, target_address, body, original_body, nick, subject, type,
                      source_transport, source_address, source_id, relay_id, enqueued_at, attempts, content)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: [
                        delivery.sequence, delivery.channel, delivery.target.transport, delivery.target.address, delivery.body,
                        delivery.originalBody, delivery.nick, delivery.subject, delivery.type.rawValue, delivery.source.transport,
                        delivery.source.address, delivery.sourceID, delivery.relayID, StorageTimestamp.text(enqueuedAt), attempts,
                        MessageContentColumn.encode(delivery.content),
                    ])
                try db.cachedStatement(sql: """
                    INSERT OR IGNORE INTO relays (relay_id, channel, source_transport, source_address, source_id, target_transport, target_address, created_at,
                      source_nick)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: [
                        delivery.relayID, delivery.channel, delivery.source.transport, delivery.source.address, delivery.sourceID,
                        delivery.target.transport, delivery.target.address, StorageTimestamp.text(enqueuedAt), delivery.nick,
                    ])
            case .complete(let sequence):
                try db.cachedStatement(sql: "DELETE FROM queue WHERE sequence = ?").execute(arguments: [sequence])
            case .attempted(let sequence, let attempts, let error):
                try db.cachedStatement(sql: "UPDATE queue SET attempts = ?, last_error = ? WHERE sequence = ?")
                    .execute(arguments: [attempts, error, sequence])
            case .deadLetter(let delivery, let enqueuedAt, let attempts, let reason):
                try db.cachedStatement(sql: "DELETE FROM queue WHERE sequence = ?").execute(arguments: [delivery.sequence])
                try DeadLetterRecord(delivery, enqueuedAt: enqueuedAt, attempts: attempts, reason: reason, deadAt: Date())
                    .insert(db, onConflict: .replace)
            case .removeDeadLetter(let sequence):
                try db.cachedStatement(sql: "DELETE FROM dead_letters WHERE sequence = ?").execute(arguments: [sequence])
            case .streamSession(let transport, let session):
                // What the server acknowledged leaves the queue in the same transaction as the
                // session state that counts it, so a restart never sends it again.
                try StateStore.deleteQueued(transport: transport, relayIDs: session?.acknowledgedIDs ?? [], in: db)
                guard lastSession[transport] == index else { continue }
                try StreamSessionRecord.save(session, transport: transport, in: db)
            case .sourcePosition(let transport, let sequence):
                try db.cachedStatement(sql: "UPDATE stream_sessions SET handled = ? WHERE transport = ? AND handled < ?")
                    .execute(arguments: [Int64(sequence), transport, Int64(sequence)])
            case .seen(let transport, let uniqueID):
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO seen_unique_ids (transport, unique_id) VALUES (?, ?)")
                    .execute(arguments: [transport, uniqueID])
            case .checkpoint(let transport, let checkpoint):
                guard lastCheckpoint[transport] == index else { continue }
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO source_checkpoints (transport, checkpoint) VALUES (?, ?)")
                    .execute(arguments: [transport, checkpoint])
            case .trimSeen(let transport, let keep):
                try db.cachedStatement(sql: """
                    DELETE FROM seen_unique_ids WHERE transport = ? AND position <= (
                      SELECT position FROM seen_unique_ids WHERE transport = ? ORDER BY position DESC LIMIT 1 OFFSET ?)
                    """).execute(arguments: [transport, transport, keep])
            case .receipt(let relayID, let target, let displayed, let at):
                // Displayed implies received; the first time of each is kept.
                try db.cachedStatement(sql: """
                    UPDATE relays SET received_at = COALESCE(received_at, ?), displayed_at = CASE WHEN ? THEN COALESCE(displayed_at, ?) ELSE displayed_at END
                    WHERE relay_id = ? AND target_transport = ? AND target_address IS ?
                    """).execute(arguments: [at, displayed, at, relayID, target.transport, target.address])
            case .copyStanzaID(let relayID, let target, let stanzaID):
                try db.cachedStatement(sql: "UPDATE relays SET target_stanza_id = ? WHERE relay_id = ? AND target_transport = ? AND target_address IS ?")
                    .execute(arguments: [stanzaID, relayID, target.transport, target.address])
            case .sourceStanzaID(let source, let sourceID, let stanzaID):
                try db.cachedStatement(sql: "UPDATE relays SET source_stanza_id = ? WHERE source_transport = ? AND source_address IS ? AND source_id = ?")
                    .execute(arguments: [stanzaID, source.transport, source.address, sourceID])
            }
        }
    }
}
