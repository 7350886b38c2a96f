/// What a PostgreSQL statement returned (``PostgresConnection``): its columns' names, its
/// rows with each value as text or nil for NULL, and how many rows it read or changed.
package struct PostgresRows: Hashable, Sendable {
    package var columns: [String]
    package var rows: [[String?]]
    /// Rows returned, or changed by an INSERT, UPDATE or DELETE.
    package var affected: Int

    /// Each row decoded as `T` by its columns' names (``PostgresRowDecoder``).
    package func decode<T: Decodable>(_ type: T.Type) throws -> [T] {
        try self.rows.map { row in try T(from: PostgresRowDecoder(columns: self.columns, values: row)) }
    }

    package init(columns: [String], rows: [[String?]], affected: Int) {
        self.columns = columns
        self.rows = rows
        self.affected = affected
    }
}
