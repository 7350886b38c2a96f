import Foundation
import IntegrationSupport
import LocalArchive
import Logging
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

extension StateIntegration {
    /// Reading the local archive, the same tests against both stores (issues 25 and 26):
    /// full-text search ranked (FTS5's bm25 in SQLite, `ts_rank` in PostgreSQL), time ranges,
    /// senders, cursor paging, corrections, every field read back, and user text that is never
    /// query syntax.
    @Suite("Archive contract (SQLite and PostgreSQL)")
    struct ArchiveContractTests {
        static let start = Date(timeIntervalSince1970: 1_800_000_000)
        static let alice = Endpoint(transport: "work", address: "alice@example.org")

        /// A store holding `bodies`, one a minute from ``start``, in channel `ops`.
        func store(_ backend: StateBackend, _ bodies: [(String, String)]) async throws -> (any StateStore, Journal) {
            try await self.store(
                backend,
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
        func store(_ backend: StateBackend, messages: [ArchivedMessage]) async throws -> (any StateStore, Journal) {
            let store = try await StateFixture(backend).open()
            let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
            try await journal.commit(messages.map { .archive($0) })
            return (store, journal)
        }

        @Test("a search ranks by relevance (more of the words, in a shorter text, first), ignores case and accents, and takes word* as a prefix", arguments: StateBackend.available)
        func ranking(_ backend: StateBackend) async throws {
            let (store, journal) = try await self.store(backend, [
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

        @Test("user text is never query syntax: quotes, operators, parentheses and a lone * are words or nothing, never an error", arguments: StateBackend.available)
        func searchIsLiteral(_ backend: StateBackend) async throws {
            let (store, journal) = try await self.store(backend, [("alice@example.org/a", "say \"NOT\" (or) AND maybe -x col:umn")])
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

        @Test("since, until, channel, sender (a bare JID takes every resource; a nick; a full address) and a cursor that walks back page by page", arguments: StateBackend.available)
        func rangesAndCursor(_ backend: StateBackend) async throws {
            let bodies = (0..<20).map { ($0 % 2 == 0 ? "alice@example.org/phone" : "bob@example.net/pc", "message \($0)") }
            let (store, journal) = try await self.store(backend, bodies)
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

        @Test("a far date in a query is clamped, never a trap; from a room only the occupant's own message is corrected", arguments: StateBackend.available)
        func farDatesAndRoomEdits(_ backend: StateBackend) async throws {
            let (store, journal) = try await self.store(backend, [("alice@example.org/a", "x")])
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

        @Test("a correction looks among the channel's newest messages only: one of those is corrected, an older one or an unknown id changes nothing", arguments: StateBackend.available)
        func correctionsLookAmongTheNewest(_ backend: StateBackend) async throws {
            let now = Date()
            let count = SQLiteStateStore.editCandidates + 5
            let oldestInReach = count - SQLiteStateStore.editCandidates
            let outOfReach = oldestInReach - 1
            let (store, journal) = try await self.store(
                backend, messages: (0..<count).map { index in
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
            await journal.shutdown()
        }

        @Test("rows inserted many to a statement keep the entries' order: ids follow it across every chunk (100 = 64 + 32 + 4)", arguments: StateBackend.available)
        func idsFollowTheEntries(_ backend: StateBackend) async throws {
            let bodies = (0..<100).map { ("alice@example.org/a", "n\($0)") }
            let (store, journal) = try await self.store(backend, bodies)
            let all = try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages
            #expect(all.count == 100)
            #expect(all.map(\.sourceID) == (0..<100).reversed().map { "m-\($0)" })
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.number > $1.number })
            await journal.shutdown()
        }

        @Test("every field reads back as written: empty and non-ASCII text, NULLs, rich content, many copies, bridge-made, across 64 + 4 rows", arguments: StateBackend.available)
        func rowsReadBackExactly(_ backend: StateBackend) async throws {
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
            let (store, journal) = try await self.store(backend, messages: written)
            let read = try store.archived(ArchiveQuery(limit: ArchiveQuery.maximumLimit)).messages.reversed().map { message in
                var message = message
                message.number = 0
                return message
            }
            #expect(read == written)
            await journal.shutdown()
        }

        @Test("a NUL character (a local transport can carry one) is left out of every text, as the XMPP copies leave it out; the rest is kept and found", arguments: StateBackend.available)
        func nulIsLeftOut(_ backend: StateBackend) async throws {
            let (store, journal) = try await self.store(backend, [("alice@example.org/a\u{0}x", "disk\u{0} full\u{0}")])
            let read = try store.indexedAndRead(ArchiveQuery(search: "full")).messages
            #expect(read.map(\.body) == ["disk full"])
            #expect(read.map(\.sender) == ["alice@example.org/ax"])
            await journal.shutdown()
        }
    }
}
