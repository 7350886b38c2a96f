import Foundation
import GRDB
import LocalArchive
import Logging
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// The journal over an intake log (issue 21): a commit is durable once copied into the
/// log, the SQLite commit follows off the caller's path, and what a killed process left
/// unapplied is applied when the next journal opens.
@Suite("journal with an intake log")
struct JournalIntakeTests {
    static let logger = Logger(label: "test")

    static func delivery(_ journal: Journal, _ index: Int) throws -> Delivery {
        var delivery = WALCheckpointerTests.delivery(index)
        delivery.sequence = try #require(journal.assignSequences(1)?.lowerBound)
        return delivery
    }

    /// A journal over a new store and intake log in a new folder, on a manual clock.
    static func loggedJournal() throws -> (TemporaryFolder, ManualClock, SQLiteStateStore, Journal) {
        let folder = try TemporaryFolder()
        let clock = ManualClock()
        let store = try SQLiteStateStore(path: folder.path("s.sqlite"))
        let journal = try Journal(store: store, log: try IntakeLogFile(path: folder.path("s.intake")), clock: clock, logger: Self.logger)
        return (folder, clock, store, journal)
    }

    @Test("a commit returns once logged; SQLite gets it with the timer's commit, for everything gathered")
    func commitIsLoggedThenApplied() async throws {
        let (folder, clock, store, journal) = try Self.loggedJournal()
        defer { withExtendedLifetime(folder) {} }
        for index in 1...3 {
            try await journal.commit([.enqueue(try Self.delivery(journal, index), enqueuedAt: Date(), attempts: 0)])
        }
        await clock.waitForSleepers(1)
        #expect(journal.commitCount == 0)
        #expect(try store.pendingCount(transport: "home") == 0)
        await journal.durable()  // all logged: returns without a commit
        #expect(journal.commitCount == 0)
        clock.advance(by: journal.lazyDelay)
        #expect(await untilTrue { journal.commitCount == 1 })
        #expect(try store.pendingCount(transport: "home") == 3)
        await journal.shutdown()
    }

    @Test("archive rows ride along: however many wait, only the relay's own entries make a commit start before the timer")
    func archiveRowsRideAlong() async throws {
        let (folder, clock, store, journal) = try Self.loggedJournal()
        defer { withExtendedLifetime(folder) {} }
        let source = Endpoint(transport: "work", address: "alice@example.org")
        let archived = (0..<(2 * Journal.applyBatch)).map { index in
            JournalEntry.archive(
                ArchivedMessage(at: Date(), channel: "c", source: source, sender: "alice@example.org/a", nick: "alice", sourceID: "m\(index)", body: "b\(index)")
            )
        }
        let seen = (1..<Journal.applyBatch).map { JournalEntry.seen(transport: "work", deduplicationKey: "u\($0)") }
        try await journal.commit(archived + seen)
        // Either the timer is armed (the rows rode along) or a commit started at once.
        #expect(await untilTrue { clock.sleeperCount == 1 || journal.commitCount > 0 })
        #expect(journal.commitCount == 0)
        try await journal.commit([.seen(transport: "work", deduplicationKey: "u-last")])
        #expect(await untilTrue { journal.commitCount == 1 })
        #expect(try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages.count == 2 * Journal.applyBatch)
        await journal.shutdown()
    }

    @Test("kill -9 before the SQLite commit: the next journal applies what the log holds, once")
    func replayAfterCrash() async throws {
        let (folder, clock, _, crashed) = try Self.loggedJournal()
        let first = try Self.delivery(crashed, 1)
        let second = try Self.delivery(crashed, 2)
        try await crashed.commit([.enqueue(first, enqueuedAt: Date(), attempts: 0), .seen(transport: "work", deduplicationKey: "u1")])
        crashed.record([.enqueue(second, enqueuedAt: Date(), attempts: 0)])
        crashed.recordLazily([.complete(sequence: first.sequence)])
        await clock.waitForSleepers(1)
        #expect(crashed.commitCount == 0)

        // The next process: same files, the crashed journal never ran its commit.
        let store = try SQLiteStateStore(path: folder.path("s.sqlite"))
        let log = try IntakeLogFile(path: folder.path("s.intake"))
        let restarted = try Journal(store: store, log: log, logger: Self.logger)
        #expect(try store.pendingCount(transport: "home") == 1)  // the second; the first was completed
        #expect(try store.isRelayID("r1"))
        #expect(try store.seenDeduplicationKeys(limit: 10)["work"] == ["u1"])
        #expect(log.records(after: try store.intakeApplied()).isEmpty)
        #expect(restarted.assignSequences(1)?.lowerBound ?? 0 > second.sequence)
        await restarted.shutdown()
        // A third start finds nothing to apply again.
        let again = try Journal(store: try SQLiteStateStore(path: folder.path("s.sqlite")), log: try IntakeLogFile(path: folder.path("s.intake")), logger: Self.logger)
        #expect(try store.pendingCount(transport: "home") == 1)
        await again.shutdown()
        await crashed.shutdown()
    }

    @Test("both halves full: the next entry waits for its commit, and the log is used again once applied")
    func fullLogFallsBackToCommits() async throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteStateStore(path: folder.path("s.sqlite"))
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        let journal = try Journal(store: store, log: log, clock: ManualClock(), logger: Self.logger)
        // Each enqueue (2,000-byte body) is about 2.1 KB: one per half.
        for index in 1...2 { try await journal.commit([.enqueue(try Self.delivery(journal, index), enqueuedAt: Date(), attempts: 0)]) }
        #expect(journal.commitCount == 0)
        try await journal.commit([.enqueue(try Self.delivery(journal, 3), enqueuedAt: Date(), attempts: 0)])
        #expect(journal.commitCount >= 1)  // it waited for SQLite, which took the first two too
        #expect(try store.pendingCount(transport: "home") == 3)
        let commits = journal.commitCount
        try await journal.commit([.enqueue(try Self.delivery(journal, 4), enqueuedAt: Date(), attempts: 0)])
        #expect(journal.commitCount == commits)  // logged again
        await journal.shutdown()
        #expect(try store.pendingCount(transport: "home") == 4)
    }

    @Test("killed after the commit but before the log is emptied: the next start applies nothing twice")
    func committedRecordsAreNotReplayed() async throws {
        let (folder, _, _, first) = try Self.loggedJournal()
        // Applying these twice would forget "b" and keep "a" (new positions on re-insert).
        for id in ["a", "b", "c"] { first.record([.seen(transport: "work", deduplicationKey: id)]) }
        first.record([.trimSeen(transport: "work", keep: 2)])
        // The log as it is before the commit: put back after it, it is the log of a process
        // killed between its commit and emptying the half.
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("s.intake")))
        await first.flushed()
        try FileManager.default.removeItem(atPath: folder.path("s.intake"))
        try before.write(to: URL(fileURLWithPath: folder.path("s.intake")))
        let store = try SQLiteStateStore(path: folder.path("s.sqlite"))
        let log = try IntakeLogFile(path: folder.path("s.intake"))
        #expect(log.records(after: nil).count == 4)
        let second = try Journal(store: store, log: log, logger: Self.logger)
        #expect(try store.seenDeduplicationKeys(limit: 10)["work"]?.sorted() == ["b", "c"])
        await second.shutdown()
        await first.shutdown()
    }

    @Test("a valid record the journal cannot read stops the start with an error and stays in the log")
    func unreadableRecordIsKept() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"))
        let garbage: [UInt8] = [99, 1, 0, 0, 0, 7]
        #expect(log.append(garbage, checksum: IntakeLogFile.checksum(garbage)) != nil)
        #expect(throws: StateStoreError.self) {
            _ = try Journal(store: try SQLiteStateStore(path: folder.path("s.sqlite")), log: log, logger: Self.logger)
        }
        #expect(try IntakeLogFile(path: folder.path("s.intake")).records(after: nil).map(\.payload) == [garbage])
    }
}
