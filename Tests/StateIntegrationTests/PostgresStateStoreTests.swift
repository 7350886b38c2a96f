import Foundation
import IntegrationSupport
import Logging
import TestServers
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

extension StateIntegration {
    /// What only the PostgreSQL store does (issue 26): its migrations, applied once and by two
    /// instances at the same moment; a database from a newer build refused; a connection lost
    /// with the server's restart replaced at the next call; a daemon's claim on the database;
    /// no password in its location.
    @Suite("PostgreSQL state store", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct PostgresStateStoreTests {
        @Test("opening twice applies the migrations once, SQLite's list in SQLite's order; two instances opening an empty database at once both succeed")
        func migrations() async throws {
            let database = try await SharedPostgres.freshDatabase()
            let url = database.url, password = database.password
            async let first = Subprocess.offThread { try PostgresStateStore(url: url, password: password).appliedMigrations() }
            async let second = Subprocess.offThread { try PostgresStateStore(url: url, password: password).appliedMigrations() }
            #expect(try await first == StateMigrations.migrator.migrations)
            #expect(try await second == StateMigrations.migrator.migrations)
            let store = try PostgresStateStore(url: url, password: password)
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in))
            #expect(try PostgresStateStore(url: url, password: password).routes().count == 1)
        }

        @Test("a database a newer build migrated is refused with a typed error that says so")
        func newerRefused() async throws {
            let database = try await SharedPostgres.freshDatabase()
            _ = try PostgresStateStore(url: database.url, password: database.password)
            try PostgresConnection(url: database.url, password: database.password).execute("INSERT INTO schema_migrations VALUES ('v99-from-the-future')")
            let error = #expect(throws: StateStoreError.self) { try PostgresStateStore(url: database.url, password: database.password) }
            #expect(error?.operation == .migrate)
            #expect(error?.underlying.contains("v99-from-the-future") == true)
        }

        @Test("the server restarted: the call on the lost connection fails with a transient error, the next one connects anew and sees what was committed")
        func reconnectsAfterRestart() async throws {
            let server = try await PostgresServer.started()
            defer { server.shutdown() }
            let store = try PostgresStateStore(url: server.url, password: server.password)
            let stored = try store.enqueue([delivery(1)])
            server.kill()
            try await Subprocess.offThread { try server.restart() }
            // The pooled connection died with the server: that call fails, marked transient (the
            // journal waits and tries again), and the next one connects anew.
            let error = #expect(throws: StateStoreError.self) { try store.pending(transport: "home", limit: 10) }
            #expect(error?.transient == true)
            #expect(try store.pending(transport: "home", limit: 10) == stored)
        }

        @Test("the server down while the journal commits: the group waits, its caller with it, and is applied once when the server is back; nothing lost")
        func journalWaitsOutARestart() async throws {
            let server = try await PostgresServer.started()
            defer { server.shutdown() }
            let store = try PostgresStateStore(url: server.url, password: server.password)
            let logs = LogRecorder()
            let journal = try Journal(store: store, logger: logs.logger("journal-test"))
            let sequences = try #require(journal.assignSequences(2))
            try await journal.commit([.enqueue(withSequence(delivery(1), sequences.lowerBound), enqueuedAt: Date(), attempts: 0)])
            server.kill()
            let committed = Task { try await journal.commit([.enqueue(withSequence(delivery(2), sequences.upperBound), enqueuedAt: Date(), attempts: 0)]) }
            // The journal meets the dead server (its pooled connection fails) and says it waits.
            #expect(await eventually { logs.messages.contains { $0.hasPrefix("state database out of reach") } })
            try await Subprocess.offThread { try server.restart() }
            try await committed.value
            #expect(try store.loadQueue().map(\.relayID) == ["r-1", "r-2"])
            #expect(journal.commitCount == 2)
            await journal.shutdown()
        }

        @Test("one daemon per database: a second claim is refused while the first store lives, and granted once it is gone")
        func soleInstance() async throws {
            let database = try await SharedPostgres.freshDatabase()
            var first: PostgresStateStore? = try PostgresStateStore(url: database.url, password: database.password)
            try first?.claimSoleInstance()
            let second = try PostgresStateStore(url: database.url, password: database.password)
            let error = #expect(throws: StateStoreError.self) { try second.claimSoleInstance() }
            #expect(error?.underlying.contains("another xmpp-bridge runs on this database") == true)
            first = nil
            #expect(await eventually { (try? second.claimSoleInstance()) != nil })
        }

        @Test("the location names the database without its password")
        func locationWithoutPassword() {
            #expect(PostgresStateStore.withoutPassword("postgresql://bridge:s3cret@db1,db2/bridge?target_session_attrs=read-write")
                == "postgresql://bridge@db1,db2/bridge?target_session_attrs=read-write")
            #expect(PostgresStateStore.withoutPassword("host=db1 password=s3cret dbname=bridge") == "host=db1 password=… dbname=bridge")
        }
    }
}
