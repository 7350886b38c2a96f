import GRDB

/// A failure of the persisted state (SQLite or PostgreSQL): which operation failed, on which database,
/// and why. The store never traps on a database problem; it throws this instead.
package struct StateStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The store operation that failed.
    package enum Operation: String, Hashable, Sendable, CaseIterable {
        case open = "open"
        case migrate = "migrate"
        case readRoutes = "read routes"
        case addRoute = "add route"
        case removeRoute = "remove route"
        case recordRelays = "record relays"
        case readRelays = "read relays"
        case pruneRelays = "prune relays"
        case enqueue = "enqueue"
        case readQueue = "read queue"
        case complete = "complete delivery"
        case readDeadLetters = "read dead letters"
        case editDeadLetters = "edit dead letters"
        case readRosterMirror = "read roster mirror snapshot"
        case saveRosterMirror = "save roster mirror snapshot"
        case inspect = "inspect"
        case replayIntakeLog = "apply the intake log"
        case readGatewayRegistrations = "read gateway registrations"
        case saveGatewayRegistration = "save gateway registration"
        case removeGatewayRegistration = "remove gateway registration"
        case readPages = "read pages"
        case readPostponedDeliveries = "read postponed deliveries"
        case readArchive = "read the archive"
        case indexArchive = "index the archive"
        case notifyInstances = "notify the other instances"
        case readOMEMO = "read the OMEMO state"
        case saveOMEMO = "save the OMEMO state"
    }

    package var operation: Operation
    /// The database file, or `:memory:`.
    package var location: String
    /// What went wrong, as the underlying error described it.
    package var underlying: String
    /// The SQLite primary result code when SQLite reported the failure (e.g. 5 `SQLITE_BUSY`,
    /// 13 `SQLITE_FULL`), so a caller can tell a transient failure from a broken database.
    package var sqliteCode: Int32?
    /// PostgreSQL's SQLSTATE when PostgreSQL reported the failure (``PostgresStateStore``).
    package var sqlState: String?
    /// The database was out of reach or the connection broke (a restart, a failover): the
    /// same work may succeed later (``PostgresStateStore``; the journal waits and tries
    /// again). Only a connection that broke after the server committed, before its answer
    /// came, leaves the work applied.
    package var transient: Bool = false

    /// The SQLSTATE of a commit refused because a lease it acts on is no longer this
    /// instance's (issue 26, fencing): its entries must not take effect anywhere.
    package static var fencedState: String { "XB001" }

    /// Whether the commit was refused by the fencing check.
    package var isFenced: Bool { self.sqlState == Self.fencedState }

    package init(operation: Operation, location: String, underlying: String, sqliteCode: Int32? = nil, sqlState: String? = nil) {
        self.operation = operation
        self.location = location
        self.underlying = underlying
        self.sqliteCode = sqliteCode
        self.sqlState = sqlState
    }

    /// Wraps any error thrown by GRDB, SQLite or the file system.
    package init(operation: Operation, location: String, error: any Error) {
        if let error = error as? StateStoreError {
            self = error
            return
        }
        let code = (error as? DatabaseError).map { $0.resultCode.primaryResultCode.rawValue }
        let state = (error as? PostgresError)?.sqlState
        self.init(operation: operation, location: location, underlying: String(describing: error), sqliteCode: code, sqlState: state)
    }

    package var description: String {
        "state database \(self.location): \(self.operation.rawValue) failed: \(self.underlying)"
    }
}
