import Foundation
import GRDB
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeState

/// The persisted state: the durable queue survives restarts in order, route changes
/// persist and merge over the configuration, relays are recorded, and the database is a
/// migrated WAL file (issue 4, "Persistence" tests).
@Suite("StateStore")
struct StateStoreTests {
    // MARK: - Queue

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

    /// Every migration's name, in order (written out: a renamed or dropped one must fail).
    static let allMigrations = ["v1-create-routes-relays-queue", "v2-roster-mirror", "v3-attempts-dead-letters", "v4-stream-sessions", "v5-source-checkpoints", "v6-route-rooms", "v7-receipts", "v8-rich-content", "v9-lean-relay-indexes", "v10-intake-log-position", "v11-gateway-registrations", "v12-paging", "v13-archive", "v14-lean-archive-index", "v15-fts-without-sizes", "v16-copy-stanza-id", "v17-omemo", "v18-logins"]

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
