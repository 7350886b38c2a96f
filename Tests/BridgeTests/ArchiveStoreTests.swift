import Foundation
import GRDB
import Logging
import Testing
import TestSupport
import TransportCore
import Transports

@testable import Bridge

/// Reading the local archive (issue 25): full-text search ranked by FTS5's bm25, time
/// ranges, senders, cursor paging, and user text that is never FTS5 syntax.
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

    @Test("a search ranks by relevance (more of the words, in a shorter text, first), ignores case and accents, and takes word* as a prefix")
    func ranking() async throws {
        let (store, journal) = try await self.store([
            ("alice@example.org/a", "Dísk FULL: disk full"),
            ("alice@example.org/a", "lunch?"),
            ("bob@example.org/b", "a long message that mentions the disk only once among many other words about other things"),
            ("bob@example.org/b", "the disk on db1 is full again after the cleanup we ran last week"),
        ])
        var query = ArchiveQuery(search: "disk full")
        query.ranked = true
        let ranked = try store.indexedAndRead(query).messages.map(\.sourceID)
        #expect(ranked == ["m-0", "m-3"], "every word must appear; twice each in a short text outranks the newer once each in a long one")
        #expect(try store.indexedAndRead(ArchiveQuery(search: "disk full")).messages.map(\.sourceID) == ["m-3", "m-0"], "unranked: newest first")
        #expect(try store.indexedAndRead(ArchiveQuery(search: "DISK")).messages.count == 3)
        #expect(try store.indexedAndRead(ArchiveQuery(search: "lun*")).messages.map(\.sourceID) == ["m-1"])
        #expect(try store.indexedAndRead(ArchiveQuery(search: "lun")).messages.isEmpty, "a whole word unless it ends in *")
        await journal.shutdown()
    }

    @Test("user text is never FTS5 syntax: quotes, operators, parentheses and a lone * are words or nothing, never an error")
    func searchIsLiteral() async throws {
        let (store, journal) = try await self.store([("alice@example.org/a", "say \"NOT\" (or) AND maybe -x col:umn")])
        for text in ["\"", "NOT", "AND maybe", "(or)", "-x", "col:umn", "*", "\"\"\"", "NEAR(a b)", "x OR", "^say"] {
            _ = try store.indexedAndRead(ArchiveQuery(search: text))
        }
        #expect(try store.indexedAndRead(ArchiveQuery(search: "NOT")).messages.count == 1)
        #expect(try store.indexedAndRead(ArchiveQuery(search: "col:umn")).messages.count == 1)
        #expect(try store.indexedAndRead(ArchiveQuery(search: "* ((")).messages.isEmpty, "nothing searchable matches nothing")
        #expect(ArchiveSearch.expression("a \"b\" c*") == "\"a\" \"\"\"b\"\"\" \"c\" *")
        #expect(ArchiveSearch.expression("  ") == nil)
        await journal.shutdown()
    }

    @Test("since, until, channel, sender (a bare JID takes every resource; a nick; a full address) and a cursor that walks back page by page")
    func rangesAndCursor() async throws {
        let bodies = (0..<20).map { ($0 % 2 == 0 ? "alice@example.org/phone" : "bob@example.net/pc", "message \($0)") }
        let (store, journal) = try await self.store(bodies)
        let ops = try store.archived(ArchiveQuery(channel: "ops", limit: 100)).messages
        #expect(ops.count == 16 && ops.allSatisfy { $0.channel == "ops" })
        let window = try store.archived(ArchiveQuery(since: Self.start.addingTimeInterval(5 * 60), until: Self.start.addingTimeInterval(8 * 60))).messages
        #expect(window.map(\.body) == ["message 7", "message 6", "message 5"])
        #expect(try store.archived(ArchiveQuery(from: "ALICE@example.org", limit: 100)).messages.count == 10)
        #expect(try store.archived(ArchiveQuery(from: "bob@example.net/pc", limit: 100)).messages.count == 10)
        #expect(try store.archived(ArchiveQuery(from: "bob", limit: 100)).messages.count == 10, "a nick")
        #expect(try store.archived(ArchiveQuery(from: "alice@example.org/tablet", limit: 100)).messages.isEmpty)
        var seen: [String] = []
        var query = ArchiveQuery(channel: "ops", limit: 6)
        while true {
            let page = try store.archived(query)
            seen += page.messages.map(\.body)
            guard let next = page.next else { break }
            query.before = next
        }
        #expect(seen == ops.map(\.body), "the pages together are the whole channel, newest first, each once")
        await journal.shutdown()
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

    @Test("a far date in a query is clamped, never a trap; from a room only the occupant's own message is corrected")
    func farDatesAndRoomEdits() async throws {
        let (store, journal) = try await self.store([("alice@example.org/a", "x")])
        #expect(try store.archived(ArchiveQuery(since: .distantFuture)).messages.isEmpty)
        #expect(try store.archived(ArchiveQuery(until: .distantFuture)).messages.count == 1)
        #expect(try store.archived(ArchiveQuery(since: Date(timeIntervalSince1970: -1e300))).messages.count == 1)

        let room = Endpoint(transport: "work", address: "ops@muc.example.org")
        let now = Date()
        try await journal.commit([
            .archive(ArchivedMessage(at: now, channel: "ops", source: room, sender: "ops@muc.example.org/alice", nick: "alice", sourceID: "same", body: "alice wrote")),
            .archive(ArchivedMessage(at: now, channel: "ops", source: room, sender: "ops@muc.example.org/bob", nick: "bob", sourceID: "b-1", body: "bob wrote")),
            .archiveEdit(channels: ["ops"], source: room, nick: "mallory", sourceID: "same", body: "spoofed", at: now),
            .archiveEdit(channels: ["ops"], source: room, nick: "bob", sourceID: "b-1", body: "bob corrected", at: now),
        ])
        await journal.flushed()
        let bodies = try store.archived(ArchiveQuery(from: "ops@muc.example.org")).messages.map(\.body)
        #expect(bodies == ["bob corrected", "alice wrote"])
        await journal.shutdown()
    }

    @Test("a correction looks among the channel's newest messages only: one of those is corrected, an older one or an unknown id changes nothing")
    func correctionsLookAmongTheNewest() async throws {
        let now = Date()
        let count = SQLiteStateStore.editCandidates + 5
        let oldestInReach = count - SQLiteStateStore.editCandidates
        let outOfReach = oldestInReach - 1
        let (store, journal) = try await self.store(
            messages: (0..<count).map { index in
                ArchivedMessage(
                    at: now.addingTimeInterval(Double(index - count)), channel: "ops", source: Self.alice, sender: "alice@example.org/a",
                    nick: "alice", sourceID: "m-\(index)", body: "text \(index)"
                )
            }
        )
        try await journal.commit([
            .archiveEdit(channels: ["ops"], source: Self.alice, nick: nil, sourceID: "m-\(outOfReach)", body: "too old to correct", at: now),
            .archiveEdit(channels: ["ops"], source: Self.alice, nick: nil, sourceID: "m-\(count - 1)", body: "corrected", at: now),
            .archiveEdit(channels: ["ops"], source: Self.alice, nick: nil, sourceID: "never-sent", body: "nothing", at: now),
            .archiveEdit(channels: ["ops"], source: Self.alice, nick: nil, sourceID: "m-\(oldestInReach)", body: nil, at: now),
        ])
        await journal.flushed()
        let all = try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages
        let bodies = Dictionary(uniqueKeysWithValues: all.map { ($0.sourceID, $0) })
        #expect(bodies["m-\(outOfReach)"]?.body == "text \(outOfReach)")
        #expect(bodies["m-\(outOfReach)"]?.editedAt == nil)
        #expect(bodies["m-\(count - 1)"]?.body == "corrected")
        // The oldest of the newest editCandidates is still in reach: retracted.
        #expect(bodies["m-\(oldestInReach)"]?.body == "")
        #expect(bodies["m-\(oldestInReach)"]?.retractedAt != nil)
        #expect(all.filter { $0.editedAt != nil || $0.retractedAt != nil }.count == 2)
        let plan = try store.read(.readArchive) { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT id FROM archive WHERE channel = 'ops' AND at >= 0 ORDER BY at DESC LIMIT 1")
                .map { $0["detail"] as String? ?? "" }.joined(separator: " ")
        }
        #expect(plan.contains("archive_by_channel_time"), "\(plan)")
        await journal.shutdown()
    }

    @Test("rows inserted many to a statement keep the entries' order: ids follow it across every chunk (100 = 64 + 32 + 4)")
    func idsFollowTheEntries() async throws {
        let bodies = (0..<100).map { ("alice@example.org/a", "n\($0)") }
        let (store, journal) = try await self.store(bodies)
        let all = try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages
        #expect(all.count == 100)
        #expect(all.map(\.sourceID) == (0..<100).reversed().map { "m-\($0)" })
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.number > $1.number })
        await journal.shutdown()
    }

    @Test("every field reads back as written: empty and non-ASCII text, NULLs, rich content, many copies, bridge-made, across 64 + 4 rows")
    func rowsReadBackExactly() async throws {
        var content = MessageContent()
        content.url = "https://files.example/ä.png"
        content.replyTo = "m-1"
        let written = (0..<68).map { index in
            ArchivedMessage(
                at: Self.start.addingTimeInterval(Double(index)), channel: index % 2 == 0 ? "ops" : "Öps ✓",
                source: index % 3 == 0 ? Endpoint(transport: "stdin") : Self.alice, sender: index % 3 == 0 ? "" : "alice@example.org/phone 📱",
                nick: index % 4 == 0 ? "" : "Ålice", sourceID: "m-\(index)", body: index % 5 == 0 ? "" : String(repeating: "body \(index) ü ", count: index),
                subject: index % 6 == 0 ? "subject ✉" : nil, content: index % 7 == 0 ? content : MessageContent(),
                copies: index % 8 == 0 ? [] : [
                    .init(target: Endpoint(transport: "home", address: "bob@example.net"), id: "r-\(index)"),
                    .init(target: Endpoint(transport: "stdout"), id: "r-\(index)-b"),
                ],
                bridgeMade: index % 9 == 0
            )
        }
        let (store, journal) = try await self.store(messages: written)
        let read = try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages.reversed().map { message in
            var message = message
            message.number = 0
            return message
        }
        #expect(read == written)
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

    @Test("a NUL character (a local transport can carry one) is left out of every text, as the XMPP copies leave it out; the rest is kept and found")
    func nulIsLeftOut() async throws {
        let (store, journal) = try await self.store([("alice@example.org/a\u{0}x", "disk\u{0} full\u{0}")])
        let read = try store.indexedAndRead(ArchiveQuery(search: "full")).messages
        #expect(read.map(\.body) == ["disk full"])
        #expect(read.map(\.sender) == ["alice@example.org/ax"])
        await journal.shutdown()
    }
}
