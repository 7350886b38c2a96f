import Foundation
import GRDB
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// The journal's lazy entries and reads on its thread (issue 21): completions ride commits
/// that happen anyway, and lookups see what was handed over before them.
@Suite("journal")
struct JournalTests {
    static func queued(_ journal: Journal, _ index: Int) async throws -> Int64 {
        let sequence = try #require(journal.assignSequences(1)?.lowerBound)
        var delivery = WALCheckpointerTests.delivery(index)
        delivery.sequence = sequence
        try await journal.commit([.enqueue(delivery, enqueuedAt: Date(), attempts: 0)])
        return sequence
    }

    @Test("a lazy completion starts no commit: it rides the next one")
    func lazyRidesNextCommit() async throws {
        let clock = ManualClock()
        let store = try SQLiteStateStore.inMemory()
        let journal = try Journal(store: store, clock: clock, logger: Logger(label: "test"))
        let first = try await Self.queued(journal, 1)
        let commits = journal.commitCount
        journal.recordLazily([.complete(sequence: first)])
        await clock.waitForSleepers(1)  // its timer is armed: nothing else will start a commit
        #expect(journal.commitCount == commits)
        #expect(try store.pendingCount(transport: "home") == 1)
        _ = try await Self.queued(journal, 2)
        #expect(journal.commitCount == commits + 1)
        #expect(try store.pendingCount(transport: "home") == 1)  // the first left, the second came
        await journal.shutdown()
    }

    @Test("with no commit to ride, a lazy completion gets its own after the delay")
    func lazyAfterDelay() async throws {
        let clock = ManualClock()
        let store = try SQLiteStateStore.inMemory()
        let journal = try Journal(store: store, lazyDelay: .milliseconds(50), clock: clock, logger: Logger(label: "test"))
        let first = try await Self.queued(journal, 1)
        let commits = journal.commitCount
        journal.recordLazily([.complete(sequence: first)])
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(49))
        #expect(journal.commitCount == commits)
        clock.advance(by: .milliseconds(1))
        #expect(await untilTrue { journal.commitCount == commits + 1 })
        #expect(try store.pendingCount(transport: "home") == 0)
        await journal.shutdown()
    }

    @Test("a delivery queued and completed in one group leaves no queue row, keeps its id map row; a later group's completion deletes")
    func queuedAndCompletedInOneGroup() throws {
        let store = try SQLiteStateStore.inMemory()
        var deliveries: [Delivery] = []
        for index in 1...3 {
            var delivery = WALCheckpointerTests.delivery(index)
            delivery.sequence = Int64(index)
            deliveries.append(delivery)
        }
        try store.write(.enqueue) { db in
            try SQLiteStateStore.apply(
                [
                    .enqueue(deliveries[0], enqueuedAt: Date(), attempts: 0), .enqueue(deliveries[1], enqueuedAt: Date(), attempts: 0),
                    .attempted(sequence: 1, attempts: 1, error: "e"), .complete(sequence: 1),
                    // Completed before it is queued (another order): not a pair, both applied.
                    .complete(sequence: 3), .enqueue(deliveries[2], enqueuedAt: Date(), attempts: 0),
                ], in: db)
        }
        #expect(try store.pendingCount(transport: "home") == 2)
        #expect(try store.isRelayID("r1") && store.isRelayID("r2") && store.isRelayID("r3"))
        try store.write(.enqueue) { db in try SQLiteStateStore.apply([.complete(sequence: 2), .complete(sequence: 3)], in: db) }
        #expect(try store.pendingCount(transport: "home") == 0)
    }

    @Test("a read on the journal's thread sees entries handed over before it, committed")
    func readAfterAppend() async throws {
        let store = try SQLiteStateStore.inMemory()
        let journal = try Journal(store: store, logger: Logger(label: "test"))
        let sequence = try #require(journal.assignSequences(1)?.lowerBound)
        var delivery = WALCheckpointerTests.delivery(1)
        delivery.sequence = sequence
        journal.record([.enqueue(delivery, enqueuedAt: Date(), attempts: 0)])
        let known = try await journal.read { store throws(StateStoreError) in try store.isRelayID("r1") }
        #expect(known)
        await journal.shutdown()
        await #expect(throws: StateStoreError.self) { _ = try await journal.read { store throws(StateStoreError) in try store.isRelayID("r1") } }
    }
}

extension JournalTests {
    @Test("at start, deliveries the ledger saw acknowledged leave the queue; a copy queued again after a bounce stays")
    func completeAcknowledged() async throws {
        let store = try SQLiteStateStore.inMemory()
        let journal = try Journal(store: store, logger: Logger(label: "test"))
        var entries: [JournalEntry] = []
        for (index, attempts) in [(1, 0), (2, 1), (3, 0)] {
            var delivery = WALCheckpointerTests.delivery(index)
            delivery.sequence = try #require(journal.assignSequences(1)?.lowerBound)
            entries.append(.enqueue(delivery, enqueuedAt: Date(), attempts: attempts))
        }
        try await journal.commit(entries)
        await journal.shutdown()
        try store.completeAcknowledged(transport: "home", relayIDs: ["r1", "r2", "r9"])
        try store.completeAcknowledged(transport: "work", relayIDs: ["r3"])  // another account's ids
        #expect(try store.loadQueue().map(\.delivery.relayID).sorted() == ["r2", "r3"])
    }
}

extension JournalTests {
    @Test("stored timestamps are GRDB's own text, rounded to the millisecond as its formatter does")
    func timestamps() throws {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        var random = SplitMix64(state: 21)
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_798_761_599.9995), Date(timeIntervalSince1970: 951_782_400.5)]
        for index in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double(random.next() % 4_102_444_800_000) / 1000 + (index % 2 == 0 ? 0.0004 : 0.0006))) }
        for date in dates {
            #expect(StorageTimestamp.text(date) == formatter.string(from: date), "\(date.timeIntervalSince1970)")
        }
    }
}

extension JournalTests {
    @Test("v9 leaves the relay path's commits without the queue's and the id map's time indexes; lookups by relay id still find their rows")
    func leanIndexes() async throws {
        let store = try SQLiteStateStore.inMemory()
        let indexes = try store.read(.inspect) { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index'") }
        #expect(!indexes.contains("queue_transport_sequence"))
        #expect(!indexes.contains("queue_by_relay_id"))
        #expect(!indexes.contains("relays_on_created_at"))
        #expect(indexes.contains("relays_source"))
        let journal = try Journal(store: store, logger: Logger(label: "test"))
        var entries: [JournalEntry] = []
        for index in 1...3 {
            var delivery = WALCheckpointerTests.delivery(index)
            delivery.sequence = try #require(journal.assignSequences(1)?.lowerBound)
            entries.append(.enqueue(delivery, enqueuedAt: Date(), attempts: 0))
        }
        try await journal.commit(entries)
        // A resumption's acknowledged ids leave the queue with the session state, in one statement.
        var session = StoredStreamSession(id: "s", location: nil, handled: 0, acknowledged: 2, unacknowledgedIDs: [])
        session.acknowledgedIDs = ["r1", "r3", "r9"]
        try await journal.commit([.streamSession(transport: "home", session)])
        await journal.shutdown()
        #expect(try store.loadQueue().map(\.delivery.relayID) == ["r2"])
    }
}
