import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A Unix-domain socket path for a listener that binds it itself (the HTTP ingress, the
/// metrics endpoint): the path is made bindable (its folder created, a stale socket file
/// replaced, a live one or any other kind of file refused), the listener binds in a
/// private folder beside it, and ``place(mode:)`` gives the socket its mode and links it
/// into place, so no one can connect while its mode is wider. Owns the file calls
/// (chmod, link, unlink) for it; ``removeIfOurs()`` cleans up at the end.
public final class StagedUnixSocket: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let path: String
    private let folder: String
    private let inode = NIOLockedValueBox<ino_t>(0)

    /// Where the listener binds until ``place(mode:)``.
    public var stagedPath: String { self.folder + "/s" }

    /// Prepares `path`; throws when it is in use, not a socket, or its folder cannot hold
    /// the private staging folder.
    public init(path: String) throws {
        let helper = UnixLineServer(path: path, mode: 0o600, splitter: LineSplitter())
        try helper.prepare()
        self.path = path
        self.folder = try helper.makeStagingFolder()
    }

    /// Gives the bound socket `mode` and links it at ``path``; the staging folder goes.
    public func place(mode: UInt32) throws(Failure) {
        defer { self.removeStaging() }
        guard chmod(self.stagedPath, mode_t(mode)) == 0, link(self.stagedPath, self.path) == 0 else {
            throw Failure(description: "cannot put the socket in place at \(self.path) with mode \(String(mode, radix: 8)): \(String(cString: strerror(errno)))")
        }
        var placed = stat()
        if lstat(self.path, &placed) == 0 { self.inode.withLockedValue { $0 = placed.st_ino } }
    }

    /// Removes the staging folder (after a failed bind, or once placed).
    public func removeStaging() {
        unlink(self.stagedPath)
        rmdir(self.folder)
    }

    /// Removes the socket file if it is still the one placed here (a successor may have
    /// bound anew since).
    public func removeIfOurs() {
        let inode = self.inode.withLockedValue { $0 }
        var current = stat()
        if inode != 0, lstat(self.path, &current) == 0, current.st_ino == inode { unlink(self.path) }
    }
}
