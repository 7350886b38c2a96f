import GRDB
import GRDBSQLite
import TransportCore

/// The archive's many-row `INSERT` (issue 25), bound by hand: the one place outside GRDB
/// that holds a `sqlite3_stmt`. Every message the relay archives passes here, on the
/// journal's thread; bound through GRDB, each of a row's twelve values was a
/// `DatabaseValue` in an array and a string SQLite copied again. Here each text is bound
/// in place from its ``ArchiveRow`` (`SQLITE_STATIC`: a nil destructor, SQLite keeps no
/// copy); the rows outlive the step, and the bindings are cleared before it returns.
///
/// GRDB prepares and caches the statement, but does not see it run: none of its
/// statement observation applies (nothing here observes the database). The statement runs
/// only inside the journal's transaction, which this checks before stepping.
package enum ArchiveInsertStatement {
    /// Values in a row, in the INSERT's column order: `at`, the row's text columns
    /// (``ArchiveRow``'s order), `bridge_made`.
    package static var columns: Int { ArchiveRow.textColumns + 2 }

    /// The most rows one statement takes, a power of two (12 values each; SQLite allows 32,766).
    package static var rowsPerStatement: Int { 1 << 6 }

    /// The INSERT of 2^k rows, at k: at most seven statements are cached.
    private static let sql: [String] = (0...rowsPerStatement.trailingZeroBitCount).map { power in
        let tuple = "(" + repeatElement("?", count: Self.columns).joined(separator: ", ") + ")"
        return """
            INSERT INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body, subject, content, copies, bridge_made)
            VALUES \(repeatElement(tuple, count: 1 << power).joined(separator: ", "))
            """
    }

    /// Inserts `rows` in order, ``rowsPerStatement`` to a statement and then halves (a
    /// commit carries a row per relayed message, and a statement's own cost was as much as
    /// its row's), inside the transaction under way.
    package static func insert(_ rows: [ArchiveRow], in db: Database) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            var count = Self.rowsPerStatement
            while count > rows.endIndex - start { count /= 2 }
            try Self.insert(rows[start..<(start + count)], with: try db.cachedStatement(sql: Self.sql[count.trailingZeroBitCount]), in: db)
            start += count
        }
    }

    private static func insert(_ rows: ArraySlice<ArchiveRow>, with statement: Statement, in db: Database) throws {
        let handle = statement.sqliteStatement
        guard sqlite3_get_autocommit(db.sqliteConnection) == 0 else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the archive's INSERT runs only inside a transaction", sql: statement.sql)
        }
        var parameter: Int32 = 1
        var bound = SQLITE_OK
        for row in rows {
            if bound == SQLITE_OK { bound = sqlite3_bind_int64(handle, parameter, row.at) }
            parameter += 1
            row.forEachText { text in
                defer { parameter += 1 }
                guard bound == SQLITE_OK else { return }
                if let text, let base = text.baseAddress {
                    bound = sqlite3_bind_text(handle, parameter, base.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
                } else if text != nil {
                    // An empty text with no address (not from a row's storage): copied, it is not NULL.
                    bound = sqlite3_bind_text(handle, parameter, "", 0, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                } else {
                    bound = sqlite3_bind_null(handle, parameter)
                }
            }
            if bound == SQLITE_OK { bound = sqlite3_bind_int(handle, parameter, row.bridgeMade ? 1 : 0) }
            parameter += 1
        }
        var code = bound
        if bound == SQLITE_OK {
            let stepped = sqlite3_step(handle)
            code = stepped == SQLITE_DONE ? SQLITE_OK : stepped
        }
        let message = code == SQLITE_OK ? nil : db.lastErrorMessage
        // The bindings point into the rows: none may outlive this call.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        withExtendedLifetime(rows) {}
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }
}
