import Foundation
import Synchronization
import TestServers

/// One PostgreSQL for the whole test process (issue 26), started on first use off the
/// shared thread pool; each test gets a database of its own on it, so tests stay apart
/// without an `initdb` each. Tests that kill, pause or restart a server start their own
/// (``PostgresServer/started(password:readOnly:)``). The server is stopped, by its pid,
/// when the test process exits.
public enum SharedPostgres {
    /// A fresh, empty database: its URL and the role's password.
    public struct Database: Sendable {
        public let url: String
        public let password: String
        /// The shared server's loopback port.
        public let port: Int
    }

    private static let server = Mutex<Task<PostgresServer, any Error>?>(nil)
    /// The server once started: what the exit handler stops.
    private static let running = Mutex<PostgresServer?>(nil)

    /// A new database on the shared server (started now if it is the first).
    public static func freshDatabase() async throws -> Database {
        let starting = self.server.withLock { task in
            if let task { return task }
            let started = Task { try await PostgresServer.started() }
            task = started
            atexit { SharedPostgres.stopAtExit() }
            return started
        }
        let server = try await starting.value
        self.running.withLock { $0 = server }
        let name = "test_\(UInt64.random(in: 1...UInt64.max))"
        try await Subprocess.offThread { try server.createDatabase(name) }
        return Database(url: server.url(database: name), password: server.password, port: server.port)
    }

    /// What the shared server logged so far (empty before it started).
    public static var log: String {
        self.running.withLock { $0 }?.log ?? ""
    }

    private static func stopAtExit() {
        self.running.withLock { $0 }?.shutdown()
    }
}
