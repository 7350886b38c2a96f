import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bridge's persisted state in SQLite: runtime route changes, the relay id map and the
/// durable outbound queue (issue 4, "Persisted state in SQLite").
///
/// A file-backed store is a GRDB `DatabasePool` in WAL mode, so readers never wait for the
/// writer; each method is one transaction. The file is created with mode 0600 (its folder
/// 0700), since the queue holds message bodies. Every failure is a `StateStoreError`.
///
/// The features live in `SQLiteStateStore+Routes.swift`, `SQLiteStateStore+Relays.swift`,
/// `SQLiteStateStore+Queue.swift` and, for roster mirror snapshots (issue 5),
/// `RosterMirror/RosterMirrorStore.swift`.
package final class SQLiteStateStore: StateStore {
    /// The database file, or `:memory:`.
    package let location: String
    /// Reads the time for `changed_at`, `created_at` and `enqueued_at` (injected for tests).
    package let now: @Sendable () -> Date
    private let writer: any DatabaseWriter

    /// How long a write waits for a lock held by another process (e.g. `xmpp-bridge route add`
    /// editing the database while the daemon writes) before failing with `SQLITE_BUSY`.
    package static let busyTimeout: TimeInterval = 5

    /// Opens (creating if needed) the database at `path` and applies missing migrations.
    /// - Parameter manualCheckpoints: no automatic WAL checkpoints on commit (a
    ///   ``WALCheckpointer`` runs them instead; the daemon).
    package init(path: String, manualCheckpoints: Bool = false, now: @escaping @Sendable () -> Date = { Date() }) throws(StateStoreError) {
        self.location = path
        self.now = now
        do {
            try Self.prepareFile(at: path)
            var configuration = Configuration()
            configuration.label = "SQLiteStateStore"
            configuration.busyMode = .timeout(Self.busyTimeout)
            // WAL with synchronous=NORMAL: a commit survives a crash of the process (the
            // durability the queue promises across restarts) without an fsync per commit;
            // only a power loss can take the last commits back.
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                if manualCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            }
            self.writer = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StateStoreError(operation: .open, location: path, error: error)
        }
        try self.migrate()
    }

    /// Opens the database at `path` read-only, for inspection by a command while no daemon
    /// runs: nothing is created, migrated or written. A database an older build wrote (with
    /// migrations missing) is refused with a hint; the next `run` migrates it.
    package init(readingAt path: String, now: @escaping @Sendable () -> Date = { Date() }) throws(StateStoreError) {
        self.location = path
        self.now = now
        do {
            var configuration = Configuration()
            configuration.label = "SQLiteStateStore"
            configuration.readonly = true
            configuration.busyMode = .timeout(Self.busyTimeout)
            self.writer = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StateStoreError(operation: .open, location: path, error: error)
        }
        let migrator = StateMigrations.migrator
        let current: Bool
        do {
            current = try self.writer.read { db in try migrator.hasCompletedMigrations(db) && !migrator.hasBeenSuperseded(db) }
        } catch {
            throw StateStoreError(operation: .inspect, location: path, error: error)
        }
        guard current else {
            throw StateStoreError(
                operation: .inspect, location: path,
                underlying: "written by another version of xmpp-bridge; `xmpp-bridge run` migrates it (this command does not)"
            )
        }
    }

    /// A store that lives in memory only: for tests, and for measuring the durable queue
    /// against an in-memory run.
    package static func inMemory(now: @escaping @Sendable () -> Date = { Date() }) throws(StateStoreError) -> SQLiteStateStore {
        let location = ":memory:"
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.label = "SQLiteStateStore"
            queue = try DatabaseQueue(configuration: configuration)
        } catch {
            throw StateStoreError(operation: .open, location: location, error: error)
        }
        return try SQLiteStateStore(writer: queue, location: location, now: now)
    }

    private init(writer: any DatabaseWriter, location: String, now: @escaping @Sendable () -> Date) throws(StateStoreError) {
        self.writer = writer
        self.location = location
        self.now = now
        try self.migrate()
    }

    /// Applies the migrations this database lacks; refuses a database migrated by a newer
    /// build, whose schema this one does not know.
    private func migrate() throws(StateStoreError) {
        let migrator = StateMigrations.migrator
        do {
            // On the writer: a reader connection opened before the migration would keep the
            // old schema in its cache.
            let superseded = try self.writer.write { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                throw StateStoreError(
                    operation: .migrate, location: self.location,
                    underlying: "written by a newer xmpp-bridge (unknown migrations); upgrade, or use another state path"
                )
            }
            try migrator.migrate(self.writer)
        } catch {
            throw StateStoreError(operation: .migrate, location: self.location, error: error)
        }
    }

    /// Creates the folder (0700) and an empty database file (0600) if they are missing, so
    /// SQLite's WAL and shared-memory files inherit the file's mode.
    private static func prepareFile(at path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw StateStoreError(
                operation: .open, location: path, underlying: "cannot create the file: \(String(cString: strerror(errno)))"
            )
        }
    }

    // MARK: - Access

    /// Runs `value` in a read transaction, wrapping failures as `operation`.
    package func read<T>(_ operation: StateStoreError.Operation, _ value: (Database) throws -> T) throws(StateStoreError) -> T {
        do {
            return try self.writer.read(value)
        } catch {
            throw StateStoreError(operation: operation, location: self.location, error: error)
        }
    }

    /// Runs `updates` in a write transaction, wrapping failures as `operation`.
    package func write<T>(_ operation: StateStoreError.Operation, _ updates: (Database) throws -> T) throws(StateStoreError) -> T {
        do {
            return try self.writer.write(updates)
        } catch {
            throw StateStoreError(operation: operation, location: self.location, error: error)
        }
    }

    // MARK: - Diagnostics

    /// SQLite's journal mode: `wal` for a file-backed store, `memory` in memory.
    package func journalMode() throws(StateStoreError) -> String {
        try self.read(.inspect) { db in
            try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? ""
        }
    }

    /// The identifiers of the migrations applied to this database, in order.
    package func appliedMigrations() throws(StateStoreError) -> [String] {
        try self.read(.inspect) { db in try StateMigrations.migrator.completedMigrations(db) }
    }
}
