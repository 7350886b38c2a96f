import Foundation
import GRDB
import Testing
import TestSupport
import TransportCore
import Transports

@testable import Bridge

/// The persisted state: the durable queue survives restarts in order, route changes
/// persist and merge over the configuration, relays are recorded, and the database is a
/// migrated WAL file (issue 4, "Persistence" tests).
@Suite("StateStore")
struct StateStoreTests {
    // MARK: - Queue

    @Test("the queue survives a restart and keeps its order")
    func queueSurvivesRestart() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")

        var enqueued: [Delivery] = []
        do {
            let store = try SQLiteStateStore(path: path)
            enqueued = try store.enqueue((0..<100).map { delivery($0) })
        }  // the store deinitialises here: the "process" exits

        #expect(enqueued.count == 100)
        #expect(enqueued.map(\.body) == (0..<100).map { "body \($0)" })
        #expect(zip(enqueued, enqueued.dropFirst()).allSatisfy { $0.sequence < $1.sequence })

        let completed: Set<Int64>
        do {
            let store = try SQLiteStateStore(path: path)
            #expect(try store.pending(transport: "home", limit: 1000) == enqueued)
            completed = Set(enqueued.enumerated().filter { $0.offset % 3 == 0 || $0.offset < 10 }.map(\.element.sequence))
            for sequence in completed {
                #expect(try store.complete(sequence: sequence))
            }
        }

        let store = try SQLiteStateStore(path: path)
        let remaining = enqueued.filter { !completed.contains($0.sequence) }
        #expect(try store.pending(transport: "home", limit: 1000) == remaining)
        #expect(try store.pendingCount(transport: nil) == remaining.count)
    }

    @Test("every field of a delivery is stored")
    func deliveryRoundTrip() throws {
        let store = try SQLiteStateStore.inMemory()
        let full = Delivery(
            channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: "[ops] alice: hi",
            originalBody: "hi", nick: "alice", subject: "Status", type: .headline,
            source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "m-1", relayID: "r-1"
        )
        let local = Delivery(
            channel: "ops", target: Endpoint(transport: "stdout"), body: "x", originalBody: "x", nick: "cron",
            type: .normal, source: Endpoint(transport: "alerts"), sourceID: "m-2", relayID: "r-2"
        )
        let stored = try store.enqueue([full, local])
        #expect(stored.map { withSequence($0, 0) } == [full, local])
        #expect(try store.pending(transport: "home", limit: 10) == [stored[0]])
        #expect(try store.pending(transport: "stdout", limit: 10) == [stored[1]])
    }

    @Test("pending is per transport, limited, and counted")
    func pendingPerTransport() throws {
        let store = try SQLiteStateStore.inMemory()
        let stored = try store.enqueue((0..<9).map { delivery($0, to: ["home", "work", "stdout"][$0 % 3]) })

        #expect(try store.pending(transport: "work", limit: 10) == [stored[1], stored[4], stored[7]])
        #expect(try store.pending(transport: "home", limit: 2) == [stored[0], stored[3]])
        #expect(try store.pending(transport: "nobody", limit: 10).isEmpty)
        #expect(try store.pendingCount(transport: "stdout") == 3)
        #expect(try store.pendingCount(transport: "nobody") == 0)
        #expect(try store.pendingCount(transport: nil) == 9)
        #expect(try store.allPendingTransports() == ["home", "stdout", "work"])

        for delivery in stored where delivery.target.transport == "stdout" {
            try store.complete(sequence: delivery.sequence)
        }
        #expect(try store.allPendingTransports() == ["home", "work"])
    }

    @Test("completing out of order leaves the rest in order; sequences are never reused")
    func completeOutOfOrder() throws {
        let store = try SQLiteStateStore.inMemory()
        let stored = try store.enqueue((0..<5).map { delivery($0) })

        #expect(try store.complete(sequence: stored[2].sequence))
        #expect(try store.complete(sequence: stored[4].sequence))
        #expect(try store.complete(sequence: stored[0].sequence))
        #expect(try store.complete(sequence: stored[0].sequence) == false)
        #expect(try store.pending(transport: "home", limit: 10) == [stored[1], stored[3]])

        try store.complete(sequence: stored[1].sequence)
        try store.complete(sequence: stored[3].sequence)
        #expect(try store.pendingCount(transport: nil) == 0)
        let later = try store.enqueue([delivery(5)])
        #expect(later[0].sequence > stored[4].sequence)
    }

    // MARK: - Routes

    @Test("route changes survive a restart; the latest change per member wins")
    func routesPersist() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        let bob = Endpoint(transport: "home", address: "bob@b.example")
        let clock = ManualClock()

        do {
            let store = try SQLiteStateStore(path: path, now: clock.now)
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: bob, direction: .out))
            try store.removeRoute(channel: "ops", endpoint: Endpoint(transport: "stdin"))
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: bob, direction: .inout))
        }

        let store = try SQLiteStateStore(path: path, now: clock.now)
        #expect(
            try store.routes() == [
                RouteChange(channel: "ops", endpoint: Endpoint(transport: "stdin"), kind: .remove, changedAt: clock.time(1)),
                RouteChange(channel: "ops", endpoint: bob, kind: .add(.inout), changedAt: clock.time(2)),
            ]
        )

        try store.removeRoute(channel: "ops", endpoint: bob)
        try store.addRoute(channel: "ops", member: ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in))
        #expect(
            try store.routes().map { [$0.endpoint.description: $0.kind] } == [
                ["home:bob@b.example": .remove],
                ["stdin": .add(.in)],
            ]
        )
    }

    @Test("runtime routes merge over the configured channels")
    func applyRoutesMerges() throws {
        let alice = ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@a.example"), direction: .inout)
        let stdin = ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in)
        let configured = [
            RelayChannel(name: "ops", members: [alice, stdin], format: "{nick}: {body}", deliveryType: .headline),
            RelayChannel(name: "quiet", members: [alice]),
        ]
        let bob = ChannelMember(endpoint: Endpoint(transport: "home", address: "bob@b.example"), direction: .out)
        let store = try SQLiteStateStore.inMemory()

        // Nothing stored: the configuration as is.
        #expect(try store.applyRoutes(to: configured) == configured)

        try store.addRoute(channel: "ops", member: bob)
        try store.removeRoute(channel: "ops", endpoint: stdin.endpoint)
        try store.addRoute(channel: "new", member: bob)
        try store.removeRoute(channel: "quiet", endpoint: alice.endpoint)
        try store.removeRoute(channel: "unknown", endpoint: alice.endpoint)
        try store.addRoute(channel: "ops", member: ChannelMember(endpoint: alice.endpoint, direction: .in))

        var merged = try store.applyRoutes(to: configured)
        #expect(
            merged == [
                RelayChannel(
                    name: "ops", members: [ChannelMember(endpoint: alice.endpoint, direction: .in), bob],
                    format: "{nick}: {body}", deliveryType: .headline
                ),
                RelayChannel(name: "quiet", members: []),
                RelayChannel(name: "new", members: [bob], format: RelayChannel.defaultFormat, deliveryType: .chat),
            ]
        )

        // Re-adding a removed member brings it back (the addition replaces the removal, so
        // a configured member returns to its configured place).
        try store.addRoute(channel: "ops", member: stdin)
        merged = try store.applyRoutes(to: configured)
        #expect(merged[0].members == [ChannelMember(endpoint: alice.endpoint, direction: .in), stdin, bob])
        try store.removeRoute(channel: "new", endpoint: bob.endpoint)
        try store.addRoute(channel: "new", member: ChannelMember(endpoint: bob.endpoint, direction: .inout))
        merged = try store.applyRoutes(to: configured)
        #expect(merged[2] == RelayChannel(name: "new", members: [ChannelMember(endpoint: bob.endpoint, direction: .inout)]))
    }

    @Test("the merge is a pure function of the change list")
    func applyIsPure() {
        let stdin = Endpoint(transport: "stdin")
        let changes = [
            RouteChange(channel: "a", endpoint: stdin, kind: .add(.in), changedAt: Date(timeIntervalSince1970: 0)),
            RouteChange(channel: "a", endpoint: stdin, kind: .remove, changedAt: Date(timeIntervalSince1970: 1)),
            RouteChange(channel: "a", endpoint: stdin, kind: .add(.inout), changedAt: Date(timeIntervalSince1970: 2)),
        ]
        #expect(
            RouteChange.apply(changes, to: [])
                == [RelayChannel(name: "a", members: [ChannelMember(endpoint: stdin, direction: .inout)])]
        )
        #expect(RouteChange.apply(Array(changes.prefix(2)), to: []) == [RelayChannel(name: "a", members: [])])
    }

    // MARK: - Relays

    @Test("enqueue records the relay ids; an echo of one is recognised")
    func relaysRecordedWithEnqueue() throws {
        let clock = ManualClock()
        let store = try SQLiteStateStore.inMemory(now: clock.now)
        let source = Endpoint(transport: "work", address: "alice@a.example")
        let toBob = Delivery(
            channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: "b", originalBody: "b",
            nick: "alice", type: .chat, source: source, sourceID: "m-1", relayID: "r-1"
        )
        var toStdout = toBob
        toStdout.target = Endpoint(transport: "stdout")
        toStdout.relayID = "r-2"
        _ = try store.enqueue([toBob, toStdout])

        #expect(try store.isRelayID("r-1"))
        #expect(try store.isRelayID("r-2"))
        #expect(try store.isRelayID("m-1") == false)

        let relays = try store.relays(forSource: "work", address: "alice@a.example", id: "m-1")
        #expect(relays.map(\.relayID) == ["r-1", "r-2"])
        #expect(relays.map(\.target) == [toBob.target, toStdout.target])
        #expect(relays.allSatisfy { $0.source == source && $0.channel == "ops" && $0.createdAt == clock.time(0) })
        #expect(try store.relays(forSource: "work", address: nil, id: "m-1").isEmpty)

        // Recording again is harmless; a local source (nil address) is found by nil.
        var fromStdin = toBob
        fromStdin.source = Endpoint(transport: "stdin")
        fromStdin.sourceID = "line-1"
        fromStdin.relayID = "r-3"
        try store.recordRelays([toBob, fromStdin])
        #expect(try store.relays(forSource: "work", address: "alice@a.example", id: "m-1").count == 2)
        #expect(try store.relays(forSource: "stdin", address: nil, id: "line-1").map(\.relayID) == ["r-3"])

        #expect(try store.pruneRelays(before: clock.time(1)) == 2)
        #expect(try store.isRelayID("r-1") == false)
        #expect(try store.isRelayID("r-3"))
    }

    // MARK: - Database

    @Test("a v2 database gains attempt counts and dead letters and keeps its queue (issue 8)")
    func upgradeFromV2() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        do {
            let store = try SQLiteStateStore(path: path)
            _ = try store.enqueue([delivery(1), delivery(2)])
        }
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE dead_letters")
            try db.execute(sql: "ALTER TABLE queue DROP COLUMN attempts")
            try db.execute(sql: "ALTER TABLE queue DROP COLUMN last_error")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v3-attempts-dead-letters'")
        }
        let store = try SQLiteStateStore(path: path)
        let queued = try store.loadQueue()
        #expect(queued.map(\.body) == ["body 1", "body 2"])
        #expect(queued.allSatisfy { $0.attempts == 0 && $0.lastError == nil })
        #expect(try store.deadLetters().isEmpty)
        #expect(try store.lastSequence() == queued.last?.sequence)
    }

    @Test("dead letters offline: retry queues them anew after every sequence, drop forgets them")
    func deadLettersOffline() throws {
        let store = try SQLiteStateStore.inMemory()
        let stored = try store.enqueue([delivery(1), delivery(2), delivery(3)])
        try store.write(.editDeadLetters) { db in
            for item in stored.prefix(2) {
                try DeadLetterRecord(item, enqueuedAt: Date(), attempts: 10, reason: "gave up", deadAt: Date()).insert(db)
                try QueuedDeliveryRecord.deleteOne(db, key: item.sequence)
            }
        }
        #expect(try store.deadLetterCount(transport: "home") == 2)
        #expect(try store.retryDeadLetters([stored[0].sequence]) == 1)
        let queued = try store.loadQueue()
        #expect(queued.map(\.body) == ["body 3", "body 1"])
        #expect(queued.last!.sequence! > stored[2].sequence)
        #expect(try store.dropDeadLetters(nil) == 1)
        #expect(try store.deadLetters().isEmpty)
    }

    /// Every migration's name, in order (written out: a renamed or dropped one must fail).
    static let allMigrations = ["v1-create-routes-relays-queue", "v2-roster-mirror", "v3-attempts-dead-letters", "v4-stream-sessions", "v5-source-checkpoints", "v6-route-rooms", "v7-receipts", "v8-rich-content", "v9-lean-relay-indexes", "v10-intake-log-position", "v11-gateway-registrations", "v12-paging", "v13-archive", "v14-lean-archive-index", "v15-fts-without-sizes"]

    @Test("opening twice applies the migrations once")
    func migrationsAreIdempotent() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        let first = try SQLiteStateStore(path: path)
        try first.addRoute(channel: "ops", member: ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in))
        let second = try SQLiteStateStore(path: path)
        #expect(try second.appliedMigrations() == Self.allMigrations)
        #expect(try second.routes().count == 1)
        #expect(try SQLiteStateStore(path: path).appliedMigrations() == StateMigrations.migrator.migrations)
    }

    @Test("a file-backed store is in WAL mode, private, in a created folder")
    func walModeAndPermissions() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("nested/deeper/state.sqlite")
        let store = try SQLiteStateStore(path: path)
        #expect(try store.journalMode() == "wal")

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder.path("nested/deeper"))
        #expect((folderAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test("a database from a newer build is refused with a typed error")
    func newerSchemaRefused() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        let error = #expect(throws: StateStoreError.self) { try SQLiteStateStore(path: path) }
        #expect(error?.operation == .migrate)
        #expect(error?.location == path)
    }

    @Test("an unusable path is a typed error, not a trap")
    func unusablePath() throws {
        let folder = try TemporaryFolder()
        let file = folder.path("file")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let error = #expect(throws: StateStoreError.self) { try SQLiteStateStore(path: file + "/state.sqlite") }
        #expect(error?.operation == .open)
        #expect(error?.description.hasPrefix("state database \(file)/state.sqlite: open failed:") == true)

        let garbage = folder.path("garbage.sqlite")
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x41, count: 8192)))
        let corrupt = #expect(throws: StateStoreError.self) { try SQLiteStateStore(path: garbage) }
        #expect(corrupt?.sqliteCode == 26)  // SQLITE_NOTADB
    }
}

// MARK: - Helpers

/// The n-th test delivery: from alice to `transport`, with unique ids.
private func delivery(_ n: Int, to transport: String = "home") -> Delivery {
    Delivery(
        channel: "ops", target: Endpoint(transport: transport, address: transport == "stdout" ? nil : "bob@b.example"),
        body: "body \(n)", originalBody: "original \(n)", nick: "alice", subject: n.isMultiple(of: 2) ? nil : "s\(n)",
        type: .chat, source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "m-\(n)",
        relayID: "r-\(n)"
    )
}

private func withSequence(_ delivery: Delivery, _ sequence: Int64) -> Delivery {
    var copy = delivery
    copy.sequence = sequence
    return copy
}

/// A clock that advances one second per reading, from a whole-second epoch time (so dates
/// survive the database's millisecond precision).
private final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var readings = 0
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// The time of the n-th reading.
    func time(_ n: Int) -> Date { self.start.addingTimeInterval(TimeInterval(n)) }

    /// Reads the clock.
    var now: @Sendable () -> Date {
        { [self] in
            self.lock.withLock {
                defer { self.readings += 1 }
                return self.time(self.readings)
            }
        }
    }
}

/// A folder under the system temporary folder, removed when the value is released.
final class TemporaryFolder {
    let url: URL

    init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("StateStoreTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String { self.url.appendingPathComponent(relative).path }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}
