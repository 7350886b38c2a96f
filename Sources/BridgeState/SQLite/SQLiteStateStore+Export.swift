import Foundation
import GRDB

/// Rows as text, for `xmpp-bridge state migrate` (``StateTransfer``): both stores keep the
/// same values in the same columns, so a row read here is written there as it is.
extension SQLiteStateStore {
    /// `table`'s column names, in order.
    package func columns(of table: String) throws(StateStoreError) -> [String] {
        try self.read(.inspect) { db in try db.columns(in: table).map(\.name) }
    }

    /// Every row of `table`, `columns` as text (nil for NULL), in insertion order (`rowid`)
    /// when `ordered`, handed to `body` `batchSize` rows at a time.
    package func exportRows(
        of table: String, columns: [String], ordered: Bool, batchSize: Int, into body: ([[String?]]) throws -> Void
    ) throws(StateStoreError) {
        let list = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let sql = "SELECT \(list) FROM \(table.quotedDatabaseIdentifier)" + (ordered ? " ORDER BY rowid" : "")
        try self.read(.inspect) { db in
            var batch: [[String?]] = []
            let cursor = try Row.fetchCursor(db, sql: sql)
            while let row = try cursor.next() {
                batch.append(try (0..<columns.count).map { try Self.text(row[$0] as DatabaseValue, table: table, column: columns[$0]) })
                if batch.count == batchSize {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try body(batch) }
        }
    }

    /// A stored value as PostgreSQL reads it in a text column or parameter; a blob that is
    /// not UTF-8 (no column of the state holds one) is refused, never altered.
    private static func text(_ value: DatabaseValue, table: String, column: String) throws -> String? {
        switch value.storage {
        case .null: return nil
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return text
        case .blob(let data):
            guard let text = String(data: data, encoding: .utf8) else { throw ExportFailure(description: "\(table).\(column) holds bytes that are not UTF-8 text") }
            return text
        }
    }

    /// A value `state migrate` cannot carry over as it is.
    package struct ExportFailure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }
}
