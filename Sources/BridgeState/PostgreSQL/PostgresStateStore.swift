import Foundation
import NIOConcurrencyHelpers

/// The bridge's persisted state in PostgreSQL (issue 26, "State behind one interface"):
/// the ``StateStore`` several instances share. Same schema, same migrations and same tests
/// as ``SQLiteStateStore`` (``PostgresSchema``).
///
/// Blocking, through libpq (``PostgresConnection``): the journal's thread and commands
/// call it, never an event loop. A small pool keeps the connections idle between calls, so
/// a read from a command does not wait for the journal's commit, nor opens a connection
/// each time. A connection that failed is dropped, and the next call opens a new one: a
/// URL naming several hosts with `target_session_attrs=read-write` then finds the new
/// primary after a database failover. A group commit of the journal is one script, one
/// round trip (``apply(_:intakeThrough:as:)``).
package final class PostgresStateStore: StateStore {
    package let location: String
    package let now: @Sendable () -> Date
    private let url: String
    private let password: String?
    private let applicationName: String
    private let idle = NIOLockedValueBox<[PostgresConnection]>([])
    /// The connection holding ``claimSoleInstance()``'s lock, for the store's lifetime.
    private let soleInstance = NIOLockedValueBox<PostgresConnection?>(nil)
    /// The leases this instance holds, when it shares the state with others (the daemon):
    /// every journal commit claims those it acts on, and wakes the owners of the targets it
    /// queued for. Nil for commands and tests of one store alone.
    package let leases: LeaseBook?

    /// Idle connections kept for the next call; more are closed.
    package static var idleConnections: Int { 4 }

    /// Connects to `url` (a libpq URL; several hosts allowed) and applies the migrations the
    /// database lacks.
    package init(
        url: String, password: String?, applicationName: String = "xmpp-bridge", leases: LeaseBook? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StateStoreError) {
        self.leases = leases
        self.url = url
        self.password = password
        self.applicationName = applicationName
        self.location = Self.withoutPassword(url)
        self.now = now
        try self.withConnection(.migrate) { connection throws(PostgresError) in
            try PostgresSchema.migrate(connection)
            try LeaseTable(connection: connection).createSchema()
        }
    }

    /// A new connection of the store's own settings, for a part that keeps one (the lease
    /// keeper, the queue listener).
    package func connect(purpose: String) throws(PostgresError) -> PostgresConnection {
        try PostgresConnection(url: self.url, password: self.password, applicationName: self.applicationName + " (\(purpose))")
    }

    /// Claims the database for this process alone, until the store goes (a session
    /// advisory lock on a connection of its own): a command that edits the state without
    /// a daemon takes it, so two such commands never edit at once. Daemons go by leases
    /// and do not take it. Throws when another process holds it.
    package func claimSoleInstance() throws(StateStoreError) {
        let connection: PostgresConnection
        let claimed: Bool
        do {
            connection = try PostgresConnection(url: self.url, password: self.password, applicationName: self.applicationName + " (instance)")
            claimed = try connection.execute("SELECT pg_try_advisory_lock(\(Self.soleInstanceKey))") == [["t"]]
        } catch {
            throw StateStoreError(operation: .open, location: self.location, error: error)
        }
        guard claimed else {
            throw StateStoreError(
                operation: .open, location: self.location,
                underlying: "another xmpp-bridge runs on this database (one instance per database until leases share the accounts out)"
            )
        }
        self.soleInstance.withLockedValue { $0 = connection }
    }

    /// The advisory lock key of ``claimSoleInstance()``.
    package static var soleInstanceKey: Int64 { 0x7862_696E_7374_3031 }  // "xbinst01"

    /// The migrations applied, in order.
    package func appliedMigrations() throws(StateStoreError) -> [String] {
        try self.withConnection(.inspect) { connection throws(PostgresError) in try PostgresSchema.applied(connection) }
    }

    /// `url` with any password it holds (`user:password@`, `password=`) left out, for logs.
    package static func withoutPassword(_ url: String) -> String {
        var text = url.replacingOccurrences(of: #"(://[^:@/]*):[^@/]*@"#, with: "$1@", options: .regularExpression)
        text = text.replacingOccurrences(of: #"password=[^&\s]*"#, with: "password=…", options: .regularExpression)
        return text
    }

    // MARK: - Connections

    /// Runs `body` with a connection from the pool (or a new one), wrapping failures as
    /// `operation`; a failure is transient when the database could not be reached or the
    /// connection broke (a restart, a failover) or PostgreSQL says to try again. A
    /// connection that broke, or was left inside a transaction, is closed, not pooled.
    package func withConnection<T>(_ operation: StateStoreError.Operation, _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StateStoreError) -> T {
        let pooled = self.idle.withLockedValue { $0.popLast() }
        let connection: PostgresConnection
        do {
            connection = try pooled ?? PostgresConnection(url: self.url, password: self.password, applicationName: self.applicationName)
        } catch {
            var failure = StateStoreError(operation: operation, location: self.location, error: error)
            failure.transient = true
            throw failure
        }
        do {
            let value = try body(connection)
            self.putBack(connection)
            return value
        } catch {
            self.putBack(connection)
            var failure = StateStoreError(operation: operation, location: self.location, error: error)
            failure.transient = !connection.isOpen || error.isTransient
            throw failure
        }
    }

    /// Keeps `connection` for the next call if it is up and outside a transaction.
    private func putBack(_ connection: PostgresConnection) {
        guard connection.isIdle else { return }
        self.idle.withLockedValue { idle in
            if idle.count < Self.idleConnections { idle.append(connection) }
        }
    }

    /// One statement with parameters, its rows.
    @discardableResult
    package func query(_ operation: StateStoreError.Operation, _ sql: String, _ parameters: [String?] = []) throws(StateStoreError) -> PostgresRows {
        try self.withConnection(operation) { connection throws(PostgresError) in try connection.query(sql, parameters) }
    }

    /// Statements with their values as literals, in one transaction and one round trip;
    /// the last statement's rows.
    @discardableResult
    package func script(_ operation: StateStoreError.Operation, _ sql: String) throws(StateStoreError) -> PostgresRows {
        try self.withConnection(operation) { connection throws(PostgresError) in try connection.run(script: sql) }
    }

    /// The rows of `sql` decoded as `T` by column names.
    package func fetch<T: Decodable>(_ type: T.Type, _ operation: StateStoreError.Operation, _ sql: String, _ parameters: [String?] = []) throws(StateStoreError) -> [T] {
        let rows = try self.query(operation, sql, parameters)
        do {
            return try rows.decode(type)
        } catch {
            throw StateStoreError(operation: operation, location: self.location, underlying: "a row cannot be read: \(error)")
        }
    }

    /// The single integer `sql` returns (0 for none or NULL).
    package func integer(_ operation: StateStoreError.Operation, _ sql: String, _ parameters: [String?] = []) throws(StateStoreError) -> Int64 {
        try self.query(operation, sql, parameters).rows.first?.first.flatMap { $0 }.flatMap { Int64($0) } ?? 0
    }
}
