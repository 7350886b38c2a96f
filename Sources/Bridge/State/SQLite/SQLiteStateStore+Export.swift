import Foundation
import GRDB

/// Rows as text, for `xmpp-bridge state migrate` (``StateTransfer``): both stores keep the
/// same values in the same columns, so a row read here is written there as it is.
extension SQLiteStateStore {
    /// `table`'s column names, in order.
    func columns(of table: String) throws(StateStoreError) -> [String] {
        try self.read(.inspect) { db in try db.columns(in: table).map(\.name) }
    }

    /// Every row of `table`, `columns` as text (nil for NULL), in insertion order (`rowid`)
    /// when `ordered`, handed to `body` `batchSize` rows at a time.
    func exportRows(
        of table: String, columns: [String], ordered: Bool, batchSize: Int, into body: ([[String?]]) throws -> Void
    ) throws(StateStoreError) {
        let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let sql = "SELECT \(list) FROM \"\(table)\"" + (ordered ? " ORDER BY rowid" : "")
        try self.read(.inspect) { db in
            var batch: [[String?]] = []
            let cursor = try Row.fetchCursor(db, sql: sql)
            while let row = try cursor.next() {
                batch.append((0..<columns.count).map { Self.text(row[$0] as DatabaseValue) })
                if batch.count == batchSize {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try body(batch) }
        }
    }

    /// A stored value as PostgreSQL reads it in a text column or parameter.
    private static func text(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .null: nil
        case .int64(let number): String(number)
        case .double(let number): String(number)
        case .string(let text): text
        case .blob(let data): String(decoding: data, as: UTF8.self)
        }
    }
}
