import GRDB
import GRDBSQLite
import TransportCore

/// Binds archived messages (issue 25) to a many-row `INSERT INTO archive` by hand: the
/// one place outside GRDB that holds a `sqlite3_stmt`. Every message the relay archives
/// passes here, on the journal's thread; bound through GRDB, each of a row's twelve values
/// was a `DatabaseValue` in an array and a string SQLite copied again. Here a row's text
/// is appended to one byte buffer and bound in place (`SQLITE_STATIC`): the buffer
/// outlives the statement's step, and the bindings are cleared before it goes.
enum ArchiveRows {
    /// Values in a row, in the INSERT's column order.
    static var columns: Int { 12 }

    /// The INSERT's column list; the statement is this with `rows` tuples of ``columns`` `?`.
    static let insertPrefix = """
        INSERT INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body, subject, content, copies, bridge_made)
        VALUES
        """

    /// Inserts `messages` with `statement`. A nil destructor is `SQLITE_STATIC`: SQLite
    /// reads the text in place and keeps no copy., which has exactly `messages.count` row tuples.
    static func insert(_ messages: ArraySlice<ArchivedMessage>, with statement: Statement, in db: Database) throws {
        assert(Int(sqlite3_bind_parameter_count(statement.sqliteStatement)) == messages.count * Self.columns)
        // Each text value's start and length in `bytes`; a nil start binds NULL.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(messages.count * 256)
        var spans: [(start: Int, count: Int)?] = []
        spans.reserveCapacity(messages.count * (Self.columns - 2))
        func add(_ text: String?) {
            guard let text else { return spans.append(nil) }
            let start = bytes.count
            ArchiveCopiesColumn.appendUTF8(text, to: &bytes)
            spans.append((start, bytes.count - start))
        }
        for message in messages {
            add(message.channel)
            add(message.source.transport)
            add(message.source.address)
            add(message.sender)
            add(message.nick)
            add(message.sourceID)
            add(message.body)
            add(message.subject)
            add(message.content.isEmpty ? nil : MessageContentColumn.encode(message.content))
            if message.copies.isEmpty {
                spans.append(nil)
            } else {
                let start = bytes.count
                ArchiveCopiesColumn.append(message.copies, to: &bytes)
                spans.append((start, bytes.count - start))
            }
        }
        bytes.append(0)  // never an empty buffer: an empty text needs a pointer, NULL has none
        let handle = statement.sqliteStatement
        let code: Int32 = bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var parameter: Int32 = 1
            var span = 0
            var bound = SQLITE_OK
            func bindText() {
                defer { parameter += 1; span += 1 }
                guard bound == SQLITE_OK else { return }
                if let (start, count) = spans[span] {
                    bound = sqlite3_bind_text(handle, parameter, base + start, Int32(count), nil)
                } else {
                    bound = sqlite3_bind_null(handle, parameter)
                }
            }
            for message in messages {
                if bound == SQLITE_OK { bound = sqlite3_bind_int64(handle, parameter, StateStore.milliseconds(message.at)) }
                parameter += 1
                for _ in 0..<(Self.columns - 2) { bindText() }
                if bound == SQLITE_OK { bound = sqlite3_bind_int(handle, parameter, message.bridgeMade ? 1 : 0) }
                parameter += 1
            }
            guard bound == SQLITE_OK else { return bound }
            let stepped = sqlite3_step(handle)
            // The bindings point into `bytes`: none may outlive this closure.
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            return stepped == SQLITE_DONE ? SQLITE_OK : stepped
        }
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
        }
    }
}
