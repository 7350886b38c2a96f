import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on `<state>.lock`, held while the daemon runs, so two bridges never
/// drain the same queue (which would send everything twice). This file owns the descriptor.
final class InstanceLock: Sendable {
    private let descriptor: Int32

    struct Held: Error, CustomStringConvertible {
        let path: String
        var description: String { "another xmpp-bridge is running with this state database (\(self.path) is locked)" }
    }

    init(path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Held(path: "\(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw Held(path: path)
        }
        self.descriptor = descriptor
    }

    deinit {
        flock(self.descriptor, LOCK_UN)
        close(self.descriptor)
    }
}
