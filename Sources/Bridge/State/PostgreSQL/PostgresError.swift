/// A PostgreSQL failure: what was being done, libpq's or the server's message, and the
/// server's SQLSTATE when it sent one (`42601`: a syntax error; `28P01`: a wrong password).
struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being done.
    enum Operation: String, Hashable, Sendable {
        case connect = "connecting"
        case execute = "running a statement"
    }

    /// What was being done.
    var operation: Operation
    /// libpq's or the server's message.
    var message: String
    /// The server's SQLSTATE, when it sent one.
    var sqlState: String?

    var description: String {
        "PostgreSQL, \(self.operation.rawValue): \(self.message)" + (self.sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }
}
