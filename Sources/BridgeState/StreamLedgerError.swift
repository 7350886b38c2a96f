/// A stream ledger file (``StreamLedgerFile``) could not be opened or mapped.
package struct StreamLedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    package var path: String
    /// What failed: open, resize, map, create the folder.
    package var operation: String
    package var errno: Int32

    package var description: String {
        "cannot \(self.operation) the stream ledger \(self.path): \(String(cString: strerror(self.errno)))"
    }

    package init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
