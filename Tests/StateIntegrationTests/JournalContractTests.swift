import Foundation
import IntegrationSupport
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

extension StateIntegration {
    /// Every kind of journal entry, applied by each store and read back the same (issue 26):
    /// the queue with its passing deliveries, stream sessions and what they acknowledge,
    /// resume points, seen ids and their trimming, receipts and stanza ids in the id map,
    /// pages, notifications, postponed deliveries, the intake log position, and text no SQL
    /// literal can be broken by.
    @Suite("Journal entries, both stores")
    struct JournalContractTests {
        static let at = Date(timeIntervalSince1970: 1_800_000_000)

        @Test("a group commit: queued, completed in the same group (no queue row, an id map row), attempted, dead; sequences go on after the highest", arguments: StateBackend.available)
        func queueEntries(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            let deliveries = (1...4).map { n in withSequence(delivery(n), Int64(n)) }
            try store.apply([
                .enqueue(deliveries[0], enqueuedAt: Self.at, attempts: 0),
                .enqueue(deliveries[1], enqueuedAt: Self.at, attempts: 2),
                .enqueue(deliveries[2], enqueuedAt: Self.at, attempts: 0),
                .complete(sequence: 3),
                .enqueue(deliveries[3], enqueuedAt: Self.at, attempts: 0),
                .attempted(sequence: 2, attempts: 3, error: "wait/resource-constraint"),
                .deadLetter(deliveries[3], enqueuedAt: Self.at, attempts: 5, reason: "gave up"),
            ], intakeThrough: IntakeLogFile.Position(epoch: UInt64.max - 1, end: 4096))
            let queue = try store.loadQueue()
            #expect(queue.map(\.sequence) == [1, 2])
            #expect(queue.map(\.attempts) == [0, 3])
            #expect(queue[1].lastError == "wait/resource-constraint")
            #expect(queue[0].enqueuedAt == Self.at)
            #expect(try store.isRelayID("r-3"), "a delivery queued and completed in one group keeps its id map row")
            #expect(try store.deadLetters().map(\.relayID) == ["r-4"])
            #expect(try store.deadLetterReasons(relayIDs: ["r-4", "r-1"]) == ["r-4": "gave up"])
            #expect(try store.intakeApplied() == IntakeLogFile.Position(epoch: UInt64.max - 1, end: 4096))
            #expect(try store.lastSequence() == 4)
            let next = try store.enqueue([delivery(5)])
            #expect(next[0].sequence == 5, "the queue's own numbering goes on after the journal's")
            try store.apply([.complete(sequence: 1), .removeDeadLetter(sequence: 4)], intakeThrough: nil)
            #expect(try store.loadQueue().map(\.sequence) == [2, 5])
            #expect(try store.deadLetterCount(transport: "home") == 0)
        }

        @Test("stream sessions: the last of a group is stored, what the server acknowledged leaves the queue, handled never goes back; resume points; seen ids trimmed to the newest", arguments: StateBackend.available)
        func sessionsAndSources(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            let queued = try store.enqueue([delivery(1), delivery(2), delivery(3)])
            var session = StoredStreamSession(id: "s-1", location: "127.0.0.1:5222", handled: 7, acknowledged: 2, unacknowledgedIDs: ["r-3"], jid: "home@b.example/x")
            session.acknowledgedIDs = ["r-1", "r-2"]
            var older = session
            older.handled = 1
            older.acknowledgedIDs = []
            try store.apply([
                .streamSession(transport: "home", older),
                .streamSession(transport: "home", session),
                .sourcePosition(transport: "home", sequence: 9),
                .sourcePosition(transport: "home", sequence: 8),
                .resumePoint(key: "home", position: "archive-1"),
                .resumePoint(key: "home", position: "archive-2"),
                .resumePoint(key: "room:ops@muc", position: "room-1"),
            ] + (1...6).map { .seen(transport: "home", deduplicationKey: "u\($0)") } + [.seen(transport: "home", deduplicationKey: "u2"), .trimSeen(transport: "home", keep: 4)], intakeThrough: nil)
            #expect(try store.pending(transport: "home", limit: 10) == [queued[2]])
            var stored = session
            stored.acknowledgedIDs = []
            stored.handled = 9
            #expect(try store.streamSessions() == ["home": stored])
            #expect(try store.resumePoints() == ["home": "archive-2", "room:ops@muc": "room-1"])
            #expect(try store.seenDeduplicationKeys(limit: 10) == ["home": ["u3", "u4", "u5", "u6"]])
            #expect(try store.seenDeduplicationKeys(limit: 2) == ["home": ["u5", "u6"]])
            try store.apply([.streamSession(transport: "home", nil)], intakeThrough: nil)
            #expect(try store.streamSessions().isEmpty)
        }

        @Test("login state (issue 43): the user agent id alone, then a token, then a rotated one, read back as written; text no literal breaks", arguments: StateBackend.available)
        func logins(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            #expect(try store.logins().isEmpty)
            let agent = "d4565fa7-4d72-4749-b3d3-740edbf87770"
            let first = StoredLogin.Token(secret: "secret-token:fast-'1' \\", mechanism: "HT-SHA-256-EXPR", expiry: Self.at, passwordCheck: "c2hlY2s=")
            let rotated = StoredLogin.Token(secret: "secret-token:fast-2", mechanism: "HT-SHA-256-NONE", expiry: Self.at.addingTimeInterval(86_400), passwordCheck: "c2hlY2s=")
            try store.apply([.login(transport: "home", StoredLogin(userAgentID: agent)), .login(transport: "work", StoredLogin(userAgentID: "w"))], intakeThrough: nil)
            #expect(try store.logins() == ["home": StoredLogin(userAgentID: agent), "work": StoredLogin(userAgentID: "w")])
            try store.apply([.login(transport: "home", StoredLogin(userAgentID: agent, token: first))], intakeThrough: nil)
            #expect(try store.logins()["home"] == StoredLogin(userAgentID: agent, token: first))
            try store.apply([.login(transport: "home", StoredLogin(userAgentID: agent, token: rotated))], intakeThrough: nil)
            #expect(try store.logins()["home"] == StoredLogin(userAgentID: agent, token: rotated))
            try store.apply([.login(transport: "home", StoredLogin(userAgentID: agent))], intakeThrough: nil)
            #expect(try store.logins()["home"]?.token == nil, "a refused token is forgotten in the state too")
            let session = StoredStreamSession(id: "s-1", location: nil, handled: 3, acknowledged: 1, unacknowledgedIDs: ["r-9"], jid: "home@b.example/x")
            try store.apply([
                .login(transport: "home", StoredLogin(userAgentID: agent, token: rotated)), .streamSession(transport: "home", session),
                .resumePoint(key: "home", position: "archive-7"), .resumePoint(key: "home room:ops@muc", position: "room-1"),
            ], intakeThrough: nil)
            // One account's row of each, as the bridge reads them when it makes the account.
            #expect(try store.startingPoint(transport: "home") == StoredStartingPoint(session: session, login: StoredLogin(userAgentID: agent, token: rotated), resumePoint: "archive-7"))
            #expect(try store.startingPoint(transport: "work") == StoredStartingPoint(login: StoredLogin(userAgentID: "w")))
            #expect(try store.startingPoint(transport: "nobody") == StoredStartingPoint())
        }

        @Test("receipts and markers (the first time of each), stanza ids of the copy and the source, and what a reference then finds", arguments: StateBackend.available)
        func idMapEntries(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            let room = Endpoint(transport: "work", address: "ops@muc.example")
            var toRoom = delivery(1)
            toRoom.target = room
            let stored = try store.enqueue([toRoom])
            let later = Self.at.addingTimeInterval(60)
            try store.apply([
                .receipt(relayID: "r-1", target: room, displayed: false, at: Self.at),
                .receipt(relayID: "r-1", target: room, displayed: true, at: later),
                .receipt(relayID: "r-1", target: Endpoint(transport: "other"), displayed: true, at: Self.at),
                .copyStanzaID(relayID: "r-1", target: room, stanzaID: "room-copy-id"),
                .sourceStanzaID(source: stored[0].source, sourceID: "m-1", stanzaID: "source-archive-id"),
            ], intakeThrough: nil)
            let relay = try #require(try store.relay("r-1"))
            #expect(relay.receivedAt == Self.at)
            #expect(relay.displayedAt == later)
            #expect(relay.copyStanzaID == "room-copy-id")
            #expect(relay.sourceStanzaID == "source-archive-id")
            let fromRoom = try store.references(to: "room-copy-id", from: room)
            #expect(fromRoom.id(for: stored[0].source) == "m-1", "the room refers to our copy by the id it gave it; the source knows its own id")
            let fromSource = try store.references(to: "source-archive-id", from: stored[0].source)
            #expect(fromSource.id(for: room, room: true) == "room-copy-id", "the source refers to its message by its stanza-id")
        }

        @Test("v16 renames a copy's stanza-id column (target_stanza_id → copy_stanza_id) and keeps what it held", arguments: StateBackend.available)
        func copyStanzaIDColumnRenamed(_ backend: StateBackend) async throws {
            let fixture = try await StateFixture(backend)
            let room = Endpoint(transport: "work", address: "ops@muc.example")
            var toRoom = delivery(1)
            toRoom.target = room
            do {
                let store = try await fixture.open()
                _ = try store.enqueue([toRoom])
                try store.apply([.copyStanzaID(relayID: "r-1", target: room, stanzaID: "room-copy-id")], intakeThrough: nil)
            }
            // The database as v15 left it: the old column and index names, v16 not applied.
            let index = backend == .sqlite
                ? "DROP INDEX relays_copy_stanza; CREATE INDEX relays_target_stanza ON relays (target_stanza_id, target_transport, target_address) WHERE target_stanza_id IS NOT NULL;"
                : "ALTER INDEX relays_copy_stanza RENAME TO relays_target_stanza;"
            try await fixture.execute("""
                ALTER TABLE relays RENAME COLUMN copy_stanza_id TO target_stanza_id;
                \(index)
                DELETE FROM \(fixture.migrationsTable) WHERE identifier = 'v16-copy-stanza-id';
                """)
            let store = try await fixture.open()
            #expect(try #require(try store.relay("r-1")).copyStanzaID == "room-copy-id")
            #expect(try store.references(to: "room-copy-id", from: room).id(for: toRoom.source) == "m-1", "found by its stanza-id through the renamed column")
            try store.apply([.copyStanzaID(relayID: "r-1", target: room, stanzaID: "room-copy-id-2")], intakeThrough: nil)
            #expect(try #require(try store.relay("r-1")).copyStanzaID == "room-copy-id-2")
        }

        @Test("pages, accepted notifications and postponed deliveries are written, replaced, released and pruned", arguments: StateBackend.available)
        func pagingEntries(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            let source = Endpoint(transport: "web")
            var page = Page(
                source: source, id: "web-1", channel: "oncall", priority: 5, text: "disk full", createdAt: Self.at,
                recipients: [Endpoint(transport: "work", address: "alice@a.example")], copies: [:], tierSince: Self.at, lastSent: Self.at
            )
            try store.apply([.page(page), .notificationAccepted(key: "group-1", id: "web-1", at: Self.at)], intakeThrough: nil)
            page.resolved = true
            let first = delivery(1), second = delivery(2)
            try store.apply([
                .page(page),
                .postpone(first, releaseAt: Self.at, flood: true),
                .postpone(second, releaseAt: Self.at.addingTimeInterval(60), flood: false),
                .postpone(first, releaseAt: Self.at.addingTimeInterval(120), flood: false),
            ], intakeThrough: nil)
            #expect(try store.pages(since: Self.at).map(\.resolved) == [true])
            #expect(try store.acceptedNotifications(since: Self.at).map { "\($0.key) \($0.id) \($0.at == Self.at)" } == ["group-1 web-1 true"])
            let postponed = try store.postponedDeliveries()
            #expect(postponed.map(\.delivery.relayID) == ["r-2", "r-1"], "postponed again goes last")
            #expect(postponed.map(\.flood) == [false, false])
            try store.apply([.releasePostponed(relayIDs: ["r-2"]), .prunePaging(pagesBefore: Self.at, notificationsBefore: Self.at.addingTimeInterval(1))], intakeThrough: nil)
            #expect(try store.postponedDeliveries().map(\.delivery.relayID) == ["r-1"])
            #expect(try store.pages(since: .distantPast).isEmpty)
            #expect(try store.acceptedNotifications(since: .distantPast).isEmpty)
        }

        @Test("text no literal can break: quotes, backslashes, semicolons, SQL in a body, non-ASCII, a newline", arguments: StateBackend.available)
        func hostileText(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            var hostile = delivery(1)
            hostile.body = "O'Brien said \\'; DROP TABLE queue; -- \"x\" \\\\ ✓\nnext line $1 $$ E'\\x41'"
            hostile.nick = "'); DELETE FROM relays; --"
            hostile.sourceID = "id'with\\quote"
            let stored = try store.enqueue([hostile])
            #expect(try store.pending(transport: "home", limit: 1) == stored)
            #expect(try store.relays(forSource: "work", address: "alice@a.example", id: "id'with\\quote").count == 1)
        }

        @Test("a journal over the store: commits, reads after them, and sequences that go on after a restart", arguments: StateBackend.available)
        func journalOverTheStore(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            do {
                let journal = try Journal(store: try await state.open(), logger: Logger(label: "journal-test"))
                let sequences = try #require(journal.assignSequences(3))
                try await journal.commit(sequences.map { .enqueue(withSequence(delivery(Int($0)), $0), enqueuedAt: Self.at, attempts: 0) })
                journal.record([.complete(sequence: sequences.lowerBound)])
                let pending = try await journal.read { store throws(StateStoreError) in try store.pendingCount(transport: "home") }
                #expect(pending == 2)
                await journal.shutdown()
            }
            let journal = try Journal(store: try await state.open(), logger: Logger(label: "journal-test"))
            #expect(journal.assignSequences(1) == 4...4)
            await journal.shutdown()
        }
    }
}
