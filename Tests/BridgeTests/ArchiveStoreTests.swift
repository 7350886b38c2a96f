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

/// The local archive in SQLite (issue 25): its columns, history times, the FTS5 index's
/// migration and query plan. What both stores do is in StateIntegrationTests'
/// `ArchiveContractTests`.
@Suite("Archive reads")
struct ArchiveStoreTests {
    let folder = try! TemporaryFolder()
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let alice = Endpoint(transport: "work", address: "alice@example.org")

    /// A store holding `bodies`, one a minute from ``start``, in channel `ops`.
    func store(_ bodies: [(String, String)]) async throws -> (SQLiteStateStore, Journal) {
        try await self.store(
            messages: bodies.enumerated().map { index, entry in
                ArchivedMessage(
                    at: Self.start.addingTimeInterval(Double(index) * 60), channel: index % 5 == 4 ? "dev" : "ops",
                    source: Endpoint(transport: "work", address: entry.0.split(separator: "/").first.map(String.init)),
                    sender: entry.0, nick: entry.0.split(separator: "@").first.map(String.init) ?? "", sourceID: "m-\(index)", body: entry.1
                )
            }
        )
    }

    /// A store holding `messages`, archived through a journal.
    func store(messages: [ArchivedMessage]) async throws -> (SQLiteStateStore, Journal) {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        try await journal.commit(messages.map { .archive($0) })
        return (store, journal)
    }

    @Test("the copies column reads back what it stored; a malformed record is left out")
    func copiesColumn() {
        let copies = [ArchivedMessage.Copy(target: Endpoint(transport: "home", address: "b@x"), id: "r1"), .init(target: Endpoint(transport: "ops"), id: "r2")]
        #expect(ArchiveCopiesColumn.decode(ArchiveCopiesColumn.encode(copies)) == copies)
        #expect(ArchiveCopiesColumn.encode([]) == nil)
        #expect(ArchiveCopiesColumn.decode("garbage\u{1E}home\u{1F}\u{1F}r3") == [.init(target: Endpoint(transport: "home"), id: "r3")])
        // What an archive row writes in place is what the column holds, byte for byte.
        let unicode = copies + [.init(target: Endpoint(transport: "wörk", address: "ä@x"), id: "✓")]
        for list in [copies, unicode, [copies[1]]] {
            let row = ArchiveRow(at: Date(), channel: "c", source: Endpoint(transport: "t"), sender: "", nick: "", sourceID: "", body: "", subject: nil,
                content: MessageContent(), copies: list, bridgeMade: false)
            #expect(row.texts.last == ArchiveCopiesColumn.encode(list))
            #expect(ArchiveCopiesColumn.byteCount(list) == ArchiveCopiesColumn.encode(list)?.utf8.count)
        }
    }

    @Test("history times: ages, dates, date-times with Z or an offset, seconds since 1970; anything else is refused")
    func times() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(ArchiveTime.parse("2h", now: now) == now.addingTimeInterval(-7200))
        #expect(ArchiveTime.parse("90s", now: now) == now.addingTimeInterval(-90))
        #expect(ArchiveTime.parse("1.5d", now: now) == now.addingTimeInterval(-129_600))
        #expect(ArchiveTime.parse("2w", now: now) == now.addingTimeInterval(-1_209_600))
        #expect(ArchiveTime.parse("2027-01-15", now: now) == now.addingTimeInterval(-8 * 3600), "UTC midnight")
        #expect(ArchiveTime.parse("2027-01-15T08:00Z", now: now) == now)
        #expect(ArchiveTime.parse("2027-01-15 09:00:00+01:00", now: now) == now)
        #expect(ArchiveTime.parse("2027-01-15T08:00:00.500", now: now) == now.addingTimeInterval(0.5))
        #expect(ArchiveTime.parse("1800000000", now: now) == now)
        #expect(ArchiveTime.parse("1e300d", now: now) == nil && ArchiveTime.parse("99999999999999999999", now: now) == nil, "far beyond any archive: refused")
        #expect(ArchiveTime.parse("900y", now: now) == nil)
        for bad in ["", "yesterday", "2h30m", "-2h", "2027-13-01", "2027-02-30", "2027-01-15T25:00", "2027-01-15T08:00+1", "2027-01-15X", "h"] {
            #expect(ArchiveTime.parse(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test("a correction finds its message through the channel's time index")
    func correctionUsesTheTimeIndex() async throws {
        let (store, journal) = try await self.store([("alice@example.org/a", "x")])
        let plan = try store.read(.readArchive) { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT id FROM archive WHERE channel = 'ops' AND at >= 0 ORDER BY at DESC LIMIT 1")
                .map { $0["detail"] as String? ?? "" }.joined(separator: " ")
        }
        #expect(plan.contains("archive_by_channel_time"), "\(plan)")
        await journal.shutdown()
    }

    @Test("v15 rebuilds the text index without token counts, merging eight segments at a time: what v14 had indexed is found, the rest is indexed later, a correction still reaches the index")
    func textIndexMigration() async throws {
        let path = self.folder.path("state.sqlite")
        let queue = try DatabaseQueue(path: path)
        try StateMigrations.migrator.migrate(queue, upTo: "v14-lean-archive-index")
        let rows = [("m-0", "disk full on db1"), ("m-1", "disk fine"), ("m-2", "lunch"), ("m-3", "disk again, not indexed yet")]
        try await queue.write { db in
            for (index, row) in rows.enumerated() {
                if index == 3 { try SQLiteStateStore.indexArchive(in: db) }
                try SQLiteStateStore.insertArchived(
                    [ArchiveRow(ArchivedMessage(at: Self.start.addingTimeInterval(Double(index)), channel: "ops", source: Self.alice, sender: "alice@example.org/a", nick: "alice", sourceID: row.0, body: row.1))],
                    in: db
                )
            }
        }
        try queue.close()
        let store = try SQLiteStateStore(path: path)
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let schema = try store.read(.readArchive) { db in try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'archive_text'") }
        #expect(schema?.contains("columnsize = 0") == true)
        let sizes = try store.read(.readArchive) { db in try db.tableExists("archive_text_docsize") }
        #expect(!sizes, "no table of token counts")
        let automerge = try store.read(.readArchive) { db in try Int.fetchOne(db, sql: "SELECT v FROM archive_text_config WHERE k = 'automerge'") }
        #expect(automerge == 8)
        #expect(try store.archived(ArchiveQuery(search: "disk")).messages.map(\.sourceID) == ["m-1", "m-0"], "what v14 had indexed, before any new indexing")
        var ranked = ArchiveQuery(search: "disk")
        ranked.ranked = true
        #expect(try store.indexedAndRead(ranked).messages.map(\.sourceID) == ["m-1", "m-0", "m-3"], "ranked with bm25 (shortest first), the rest indexed")
        try await journal.commit([.archiveEdit(channels: ["ops"], source: Self.alice, nick: nil, sourceID: "m-0", body: "db1 is fine now", at: Self.start)])
        await journal.flushed()
        #expect(try store.indexedAndRead(ArchiveQuery(search: "disk")).messages.map(\.sourceID) == ["m-3", "m-1"])
        #expect(try store.indexedAndRead(ArchiveQuery(search: "fine")).messages.map(\.sourceID) == ["m-1", "m-0"])
        await journal.shutdown()
    }

}
