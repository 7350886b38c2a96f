/// A stream ledger file (``StreamLedgerFile``) could not be opened or mapped.
struct StreamLedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    var path: String
    /// What failed: open, resize, map, create the folder.
    var operation: String
    var errno: Int32

    var description: String {
        "cannot \(self.operation) the stream ledger \(self.path): \(String(cString: strerror(self.errno)))"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
