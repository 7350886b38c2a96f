/// A PostgreSQL failure: what was being done, libpq's or the server's message, and the
/// server's SQLSTATE when it sent one (`42601`: a syntax error; `28P01`: a wrong password).
package struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being done.
    package enum Operation: String, Hashable, Sendable {
        case connect = "connecting"
        case execute = "running a statement"
    }

    /// What was being done.
    package var operation: Operation
    /// libpq's or the server's message.
    package var message: String
    /// The server's SQLSTATE, when it sent one.
    package var sqlState: String?

    package var description: String {
        "PostgreSQL, \(self.operation.rawValue): \(self.message)" + (self.sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }

    /// Whether trying again later may succeed: a connection failure (class 08), the server
    /// shutting down or starting (57P01-57P03), too many connections (53300), or a
    /// serialization failure or deadlock (40001, 40P01).
    package var isTransient: Bool {
        guard let state = self.sqlState else { return self.operation == .connect }
        return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300", "40001", "40P01"].contains(state)
    }

    package init(operation: Operation, message: String, sqlState: String? = nil) {
        self.operation = operation
        self.message = message
        self.sqlState = sqlState
    }
}
