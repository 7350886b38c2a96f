import Foundation
import GRDB
import IntegrationSupport
import TestServers
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeState

/// One test's state, opened (and opened again, as after a restart) with either store: a
/// SQLite file of its own, or a PostgreSQL database of its own on the shared server
/// (``SharedPostgres``). The files live in one folder for the test process, removed when
/// it exits (a store may outlive the fixture that opened it).
struct StateFixture: Sendable {
    let backend: StateBackend
    private let path: String?
    private let database: SharedPostgres.Database?

    /// The folder of every SQLite file the tests make, removed at exit.
    private static let folder: TemporaryFolder? = {
        let folder = try? TemporaryFolder()
        atexit { StateFixture.removeFolder() }
        return folder
    }()

    private static func removeFolder() {
        if let url = Self.folder?.url { try? FileManager.default.removeItem(at: url) }
    }

    init(_ backend: StateBackend) async throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            guard let folder = Self.folder else { throw TestFailure("cannot make a temporary folder") }
            self.path = folder.path("\(UUID().uuidString).sqlite")
            self.database = nil
        case .postgresql:
            self.path = nil
            self.database = try await SharedPostgres.freshDatabase()
        }
    }

    /// A store over this test's state; each call is a new process's view of it. Opened on
    /// a thread of its own (a connection, migrations), not one async tests share.
    func open(now: @escaping @Sendable () -> Date = { Date() }) async throws -> any StateStore {
        let backend = self.backend, path = self.path, database = self.database
        return try await Subprocess.offThread { () throws -> any StateStore in
            switch backend {
            case .sqlite: try SQLiteStateStore(path: path!, now: now)
            case .postgresql: try PostgresStateStore(url: database!.url, password: database!.password, now: now)
            }
        }
    }

    /// Runs `sql` on this test's database directly, outside any store (taking a database
    /// back to an older schema), on a thread of its own.
    func execute(_ sql: String) async throws {
        let path = self.path, database = self.database
        try await Subprocess.offThread { () throws in
            if let path {
                // A store closed just before may still be letting its file go: wait on the lock.
                var configuration = Configuration()
                configuration.busyMode = .timeout(10)
                try DatabaseQueue(path: path, configuration: configuration).write { try $0.execute(sql: sql) }
            } else if let database {
                try PostgresConnection(url: database.url, password: database.password).run(script: sql)
            }
        }
    }

    /// The table each store records its applied migrations in.
    var migrationsTable: String {
        switch self.backend {
        case .sqlite: "grdb_migrations"
        case .postgresql: "schema_migrations"
        }
    }

    /// A PostgreSQL store over an existing database, opened on a thread of its own.
    static func open(url: String, password: String) async throws -> any StateStore {
        try await Subprocess.offThread { () throws -> any StateStore in try PostgresStateStore(url: url, password: password) }
    }
}
