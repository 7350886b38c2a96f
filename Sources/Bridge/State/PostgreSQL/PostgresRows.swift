/// What a PostgreSQL statement returned (``PostgresConnection``): its columns' names, its
/// rows with each value as text or nil for NULL, and how many rows it read or changed.
struct PostgresRows: Hashable, Sendable {
    var columns: [String]
    var rows: [[String?]]
    /// Rows returned, or changed by an INSERT, UPDATE or DELETE.
    var affected: Int

    /// Each row decoded as `T` by its columns' names (``PostgresRowDecoder``).
    func decode<T: Decodable>(_ type: T.Type) throws -> [T] {
        try self.rows.map { row in try T(from: PostgresRowDecoder(columns: self.columns, values: row)) }
    }
}
