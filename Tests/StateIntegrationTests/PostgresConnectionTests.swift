import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// libpq against a real PostgreSQL (issue 26): SCRAM over loopback, text parameters and
    /// results, errors with their SQLSTATE, a multi-host URL that skips a dead host, and a
    /// server killed and started again. Each test has a database of its own on the suite's
    /// shared server; the tests that need a read-only or a killed server start their own.
    @Suite("PostgreSQL connection (libpq)", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct PostgresConnectionTests {
        let database: SharedPostgres.Database

        init() async throws {
            self.database = try await SharedPostgres.freshDatabase()
        }

        @Test("SCRAM-SHA-256 over loopback; parameters and results as text, NULL as nil, non-ASCII intact")
        func connectsAndRoundTrips() throws {
            let connection = try PostgresConnection(url: self.database.url, password: self.database.password)
            #expect(connection.serverVersion >= 140_000)
            #expect(try connection.execute("SHOW password_encryption") == [["scram-sha-256"]])
            try connection.execute("CREATE TABLE t (id integer PRIMARY KEY, body text)")
            try connection.execute("INSERT INTO t VALUES ($1, $2), ($3, $4)", ["1", "disk ✓ full", "2", nil])
            #expect(try connection.execute("SELECT id, body FROM t ORDER BY id") == [["1", "disk ✓ full"], ["2", nil]])
            #expect(try connection.execute("SELECT count(*) FROM t WHERE body = $1", ["disk ✓ full"]) == [["1"]])
        }

        @Test("a wrong password, a dead port and a syntax error are errors that say so; the connection survives a failed statement")
        func errorsSaySo() throws {
            #expect {
                _ = try PostgresConnection(url: self.database.url, password: "wrong")
            } throws: { error in
                (error as? PostgresError)?.operation == .connect && "\(error)".contains("password authentication failed")
            }
            let dead = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
            #expect(throws: PostgresError.self) { _ = try PostgresConnection(url: "postgresql://bridge@127.0.0.1:\(dead)/bridge", password: self.database.password) }
            let connection = try PostgresConnection(url: self.database.url, password: self.database.password)
            #expect {
                try connection.execute("SELEC 1")
            } throws: { error in
                (error as? PostgresError)?.sqlState == "42601"
            }
            #expect(try connection.execute("SELECT 1") == [["1"]], "still usable")
            #expect(throws: PostgresError.self, "a NUL would cut the text short: refused") { try connection.execute("SELECT $1::text", ["a\u{0}b"]) }
            #expect(try connection.execute("SELECT $1::text", ["a b"]) == [["a b"]])
        }

        @Test("a URL naming a dead host first connects to the writable one after it (target_session_attrs=read-write)")
        func multiHostSkipsADeadHost() throws {
            let dead = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
            let url = "postgresql://bridge@127.0.0.1:\(dead),127.0.0.1:\(self.database.port)/bridge?target_session_attrs=read-write"
            let connection = try PostgresConnection(url: url, password: self.database.password)
            #expect(connection.port == self.database.port)
            #expect(try connection.execute("SELECT pg_is_in_recovery()") == [["f"]])
        }

        @Test("of two live hosts, target_session_attrs=read-write skips the read-only one named first")
        func multiHostSkipsAReadOnlyHost() async throws {
            let standby = try await PostgresServer.started(password: self.database.password, readOnly: true)
            defer { standby.shutdown() }
            let url = "postgresql://bridge@127.0.0.1:\(standby.port),127.0.0.1:\(self.database.port)/bridge?target_session_attrs=read-write"
            let connection = try PostgresConnection(url: url, password: self.database.password)
            #expect(connection.port == self.database.port)
            let readOnly = try PostgresConnection(url: standby.url, password: standby.password)
            #expect(try readOnly.execute("SHOW transaction_read_only") == [["on"]], "the first host is live, only read-only")
        }

        @Test("the server killed (kill -9): a statement fails with an error, never a crash; once it is back a new connection works")
        func serverKilled() async throws {
            let server = try await PostgresServer.started()
            defer { server.shutdown() }
            let connection = try PostgresConnection(url: server.url, password: server.password)
            let backend = try #require(try connection.execute("SELECT pg_backend_pid()").first?.first.flatMap { $0 }.flatMap { pid_t($0) })
            server.kill()
            // The postmaster's children (this connection's backend among them) end on their own.
            #expect(await eventually { Glibc.kill(backend, 0) != 0 && errno == ESRCH })
            #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
            #expect(!connection.isOpen)
            try server.restart()
            let again = try PostgresConnection(url: server.url, password: server.password)
            #expect(try again.execute("SELECT 2") == [["2"]])
        }
    }
}
