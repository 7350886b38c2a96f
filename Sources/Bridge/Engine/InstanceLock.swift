import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An `flock` on `<state>.lock`. The daemon holds it exclusively while it runs, so two
/// bridges never drain the same queue (which would send everything twice) and no command
/// migrates or edits the database under a daemon that is opening it. Commands that work on
/// the database without a daemon take it too: shared to read, exclusive to write.
///
/// The state folder is created (mode 0700) if it is missing. This file owns the descriptor.
package final class InstanceLock: Sendable {
    package enum Mode: Sendable {
        /// The daemon, or a command that writes (and may migrate) the database.
        case exclusive
        /// A command that only reads the database.
        case shared
    }

    package enum Failure: Error, CustomStringConvertible, Equatable {
        /// Someone else holds the lock in a conflicting mode.
        case held(path: String)
        /// The lock file (or its folder) cannot be made or opened.
        case unusable(path: String, reason: String)

        package var description: String {
            switch self {
            case .held(let path):
                "another xmpp-bridge is running or starting with this state database (\(path) is locked)"
            case .unusable(let path, let reason):
                "cannot use the lock file \(path): \(reason)"
            }
        }
    }

    private let descriptor: Int32

    /// Takes the lock at `path` in `mode` now, or fails.
    package init(path: String, mode: Mode = .exclusive) throws(Failure) {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .unusable(path: path, reason: "cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .unusable(path: path, reason: String(cString: strerror(errno)))
        }
        var result = flock(descriptor, (mode == .exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB)
        while result != 0, errno == EINTR {
            result = flock(descriptor, (mode == .exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB)
        }
        guard result == 0 else {
            let error = errno
            close(descriptor)
            throw error == EWOULDBLOCK ? .held(path: path) : .unusable(path: path, reason: String(cString: strerror(error)))
        }
        self.descriptor = descriptor
    }

    /// Takes the lock, trying again every `interval` for up to `wait` while someone else
    /// holds it: a command's hold of a few milliseconds must not make the daemon fail.
    package static func acquire<C: Clock>(
        path: String, mode: Mode = .exclusive, wait: Duration, interval: Duration = .milliseconds(20), clock: C = ContinuousClock()
    ) async throws(Failure) -> InstanceLock where C.Duration == Duration {
        let deadline = clock.now.advanced(by: wait)
        while true {
            do {
                return try InstanceLock(path: path, mode: mode)
            } catch .held(let held) {
                guard clock.now < deadline else { throw .held(path: held) }
                do {
                    try await clock.sleep(for: interval)
                } catch {
                    throw .held(path: held)  // cancelled: stop trying
                }
            }
        }
    }

    deinit {
        flock(self.descriptor, LOCK_UN)
        close(self.descriptor)
    }
}
