import CLibPQ
import Foundation

/// One connection to PostgreSQL through libpq (issue 26), the one Swift file that holds a
/// `PGconn` or a `PGresult`. Blocking, like SQLite through GRDB: it runs only on the
/// journal's own thread (or a command's), never on an event loop.
///
/// libpq (the system library, with the system OpenSSL) rather than postgres-nio: a state
/// URL may name several hosts with `target_session_attrs=read-write`, and libpq tries them
/// in turn and keeps only the writable one, which is how the state follows a database
/// failover (``PostgresStateStore`` opens a new connection after a broken one); postgres-nio takes one host and would bring a
/// second TLS stack (BoringSSL).
/// Statements go with their parameters as text (`PQexecParams`), results come back as
/// text, NULL as nil. Sendable so that a pool can hand it from thread to thread; one
/// thread at a time uses it (libpq's rule for a `PGconn`).
package final class PostgresConnection: @unchecked Sendable {
    private let connection: OpaquePointer

    /// Connects to `url` (a libpq connection URI or `key=value` string; several hosts and
    /// `target_session_attrs` allowed), with `password` when given (it wins over the URL's
    /// and `~/.pgpass`). The URL's own settings win over these defaults: a 10 s connect
    /// timeout, TCP keepalives and a 5 s `tcp_user_timeout` (a dead link fails a call
    /// within seconds, never after the kernel's quarter of an hour), a 10 s statement and
    /// 5 s lock timeout, UTF-8, no notices (they would go to stderr), and standard
    /// conforming strings (a backslash in a quoted literal is itself: ``SQLLiteral``).
    package init(url: String, password: String? = nil, applicationName: String = "xmpp-bridge") throws(PostgresError) {
        var keys = [
            "application_name", "connect_timeout", "client_encoding", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
            "tcp_user_timeout", "options", "dbname",
        ]
        var values = [
            applicationName, "10", "UTF8", "1", "5", "2", "3", "5000", "-c statement_timeout=10000 -c lock_timeout=5000 -c client_min_messages=warning -c standard_conforming_strings=on",
            url,
        ]
        if let password {
            keys.append("password")
            values.append(password)
        }
        guard !(keys + values).contains(where: Self.hasNUL) else {
            throw PostgresError(operation: .connect, message: "a connection setting holds a NUL character", sqlState: nil)
        }
        // expand_dbname = 1: `dbname` is parsed as a URI or connection string, over the
        // keys before it; the password after it wins over the URL's.
        let connection = Self.withCStrings(keys, terminated: true) { keys in
            Self.withCStrings(values, terminated: true) { values in PQconnectdbParams(keys, values, 1) }
        }
        guard let connection else { throw PostgresError(operation: .connect, message: "out of memory", sqlState: nil) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(of: connection)
            PQfinish(connection)
            throw PostgresError(operation: .connect, message: message, sqlState: nil)
        }
        // Literals (``SQLLiteral``) are written for UTF-8; a URL must not change that.
        guard PQclientEncoding(connection) == pg_char_to_encoding("UTF8") else {
            PQfinish(connection)
            throw PostgresError(operation: .connect, message: "the connection must use client_encoding UTF8", sqlState: nil)
        }
        self.connection = connection
    }

    deinit {
        PQfinish(self.connection)
    }

    /// The server's version as libpq reports it (150018 for 15.18).
    package var serverVersion: Int { Int(PQserverVersion(self.connection)) }

    /// The host this connection went to (the writable one of a multi-host URL).
    package var host: String { PQhost(self.connection).map { String(cString: $0) } ?? "" }

    /// The port this connection went to.
    package var port: Int { PQport(self.connection).flatMap { Int(String(cString: $0)) } ?? 0 }

    /// Whether the connection is up and outside any transaction: one a pool may hand out again.
    package var isIdle: Bool { self.isOpen && PQtransactionStatus(self.connection) == PQTRANS_IDLE }

    /// Whether the connection is still up as far as libpq knows (after a failure it is not).
    package var isOpen: Bool { PQstatus(self.connection) == CONNECTION_OK }

    /// Runs `sql` with `parameters` (`$1`, `$2`… as text; nil is NULL) and returns its rows,
    /// each column as text or nil for NULL.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String?]] {
        try self.query(sql, parameters).rows
    }

    /// Like ``execute(_:_:)``, with the columns' names.
    package func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        // C strings end at a NUL: a text holding one would reach the server cut short.
        guard !Self.hasNUL(sql), !parameters.contains(where: { $0.map(Self.hasNUL) ?? false }) else {
            throw PostgresError(operation: .execute, message: "a statement or parameter holds a NUL character", sqlState: nil)
        }
        let result = Self.withCStrings(parameters) { values in
            PQexecParams(self.connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        return try self.rows(of: result)
    }

    /// Runs `script`, several statements separated by semicolons, in one round trip (the
    /// simple query protocol): without BEGIN and COMMIT of its own it is one transaction,
    /// and the first statement that fails ends it with nothing applied. Values are in the
    /// text as ``SQLLiteral``s. Returns the last statement's rows.
    @discardableResult
    package func run(script: String) throws(PostgresError) -> PostgresRows {
        guard !Self.hasNUL(script) else {
            throw PostgresError(operation: .execute, message: "a statement holds a NUL character", sqlState: nil)
        }
        return try self.rows(of: PQexec(self.connection, script))
    }

    /// Waits up to `timeout` for notifications (`LISTEN`, then `NOTIFY`, issue 26) and returns
    /// the payloads that arrived, in order (empty after the timeout). Throws when the
    /// connection broke.
    package func notifications(timeout: Duration) throws(PostgresError) -> [(channel: String, payload: String)] {
        var payloads = self.drainNotifications()
        guard payloads.isEmpty else { return payloads }
        let socket = PQsocket(self.connection)
        guard socket >= 0 else { throw PostgresError(operation: .execute, message: Self.message(of: self.connection), sqlState: nil) }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let ready = poll(&descriptor, 1, milliseconds)
        guard ready > 0 else { return [] }
        guard PQconsumeInput(self.connection) == 1 else {
            throw PostgresError(operation: .execute, message: Self.message(of: self.connection), sqlState: nil)
        }
        payloads = self.drainNotifications()
        return payloads
    }

    private func drainNotifications() -> [(channel: String, payload: String)] {
        var payloads: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(self.connection) {
            payloads.append((String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return payloads
    }

    private func rows(of result: OpaquePointer?) throws(PostgresError) -> PostgresRows {
        guard let result else { throw PostgresError(operation: .execute, message: Self.message(of: self.connection), sqlState: nil) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(columns: [], rows: [], affected: Int(String(cString: PQcmdTuples(result))) ?? 0)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            throw PostgresError(operation: .execute, message: "COPY is not supported here", sqlState: nil)
        case PGRES_TUPLES_OK:
            let rows = PQntuples(result)
            let columns = PQnfields(result)
            return PostgresRows(
                columns: (0..<columns).map { String(cString: PQfname(result, $0)) },
                rows: (0..<rows).map { row in
                    (0..<columns).map { column in
                        PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                    }
                },
                affected: Int(rows)
            )
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = PQresultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
            throw PostgresError(operation: .execute, message: Self.trimmed(message), sqlState: state)
        }
    }

    private static func hasNUL(_ text: String) -> Bool {
        text.utf8.contains(0)
    }

    private static func message(of connection: OpaquePointer) -> String {
        Self.trimmed(PQerrorMessage(connection).map { String(cString: $0) } ?? "unknown error")
    }

    private static func trimmed(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `strings` as C strings (nil stays NULL), followed by one NULL when `terminated`, for
    /// the length of `body`.
    private static func withCStrings<Result>(_ strings: [String?], terminated: Bool = false, _ body: ([UnsafePointer<CChar>?]) -> Result) -> Result {
        let copies = strings.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + (terminated ? [nil] : []))
    }
}
