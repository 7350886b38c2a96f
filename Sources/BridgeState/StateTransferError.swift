/// Why `state migrate` stopped; nothing was committed.
package enum StateTransferError: Error, CustomStringConvertible {
    /// The target holds rows in these tables (or an instance ran on it).
    case targetNotEmpty(tables: [String])
    /// Reading the SQLite state failed.
    case source(StateStoreError)
    /// PostgreSQL refused a statement (copying `table`, when known).
    case target(PostgresError, table: String?)

    package var description: String {
        switch self {
        case .targetNotEmpty(let tables): "the PostgreSQL database holds state already (\(tables.joined(separator: ", "))): migrate into an empty one"
        case .source(let error): "reading the SQLite state: \(error)"
        case .target(let error, let table): "writing to PostgreSQL\(table.map { " (\($0))" } ?? ""): \(error)"
        }
    }
}
