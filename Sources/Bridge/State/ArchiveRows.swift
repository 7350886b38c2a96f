import GRDB
import GRDBSQLite
import TransportCore

/// Binds archive rows (issue 25) to a many-row `INSERT INTO archive` by hand: the one place
/// outside GRDB that holds a `sqlite3_stmt`. Every message the relay archives passes here,
/// on the journal's thread; bound through GRDB, each of a row's twelve values was a
/// `DatabaseValue` in an array and a string SQLite copied again. Here each text is bound
/// in place from its ``ArchiveRow`` (`SQLITE_STATIC`: a nil destructor, SQLite keeps no
/// copy): the rows outlive the statement's step, and the bindings are cleared before
/// it returns.
enum ArchiveRows {
    /// Values in a row, in the INSERT's column order: `at`, the row's text columns, `bridge_made`.
    static var columns: Int { ArchiveRow.textColumns + 2 }

    /// The INSERT's column list; the statement is this with a tuple of ``columns`` `?` per row.
    static let insertPrefix = """
        INSERT INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body, subject, content, copies, bridge_made)
        VALUES
        """

    /// Inserts `rows` with `statement`, which has exactly `rows.count` row tuples.
    static func insert(_ rows: ArraySlice<ArchiveRow>, with statement: Statement, in db: Database) throws {
        let handle = statement.sqliteStatement
        assert(Int(sqlite3_bind_parameter_count(handle)) == rows.count * Self.columns)
        var parameter: Int32 = 1
        var bound = SQLITE_OK
        for row in rows {
            if bound == SQLITE_OK { bound = sqlite3_bind_int64(handle, parameter, row.at) }
            parameter += 1
            row.forEachText { text in
                defer { parameter += 1 }
                guard bound == SQLITE_OK else { return }
                if let text {
                    // An empty text needs a pointer (NULL has none): any valid one will do.
                    let base = text.baseAddress ?? row.bytes.baseAddress!
                    bound = sqlite3_bind_text(handle, parameter, base.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
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
