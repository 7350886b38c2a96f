/// A PostgreSQL failure: what was being done, libpq's or the server's message, and the
/// server's SQLSTATE when it sent one (`42601`: a syntax error; `28P01`: a wrong password).
struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Operation: String, Hashable, Sendable {
        case connect = "connecting"
        case execute = "running a statement"
    }

    var operation: Operation
    var message: String
    var state: String?

    var description: String {
        "PostgreSQL, \(self.operation.rawValue): \(self.message)" + (self.state.map { " (SQLSTATE \($0))" } ?? "")
    }
}
