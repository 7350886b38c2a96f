import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
import TransportCore
#endif

/// A Unix-domain socket path for a listener (``UnixLineServer``, the HTTP ingress, the
/// metrics endpoint): the path is made bindable (its folder created, a stale socket file
/// replaced, a live one or any other kind of file refused), the listener binds in a
/// private (0700) folder beside it, and ``place(mode:)`` gives the socket its mode and
/// links it into place, so no one can connect while its mode is wider, whatever the umask.
/// Owns the file calls (lstat, chmod, link, unlink) for it; ``removeIfOurs()`` cleans up.
/// Failures are ``UnixLineServer/SetupError``s.
public final class StagedUnixSocket: Sendable {
    public let path: String
    private let folder: String
    private let inode = NIOLockedValueBox<ino_t>(0)

    /// Where the listener binds until ``place(mode:)``.
    public var stagedPath: String { self.folder + "/s" }

    /// Prepares `path`; throws when it is in use, not a socket, or its folder cannot hold
    /// the private staging folder.
    public init(path: String) throws(UnixLineServer.SetupError) {
        try Self.prepare(path)
        self.path = path
        self.folder = try Self.makeStagingFolder(beside: path)
    }

    /// Gives the bound socket `mode` and links it at ``path``; the staging folder goes.
    /// link() fails if anything took the path since it was prepared (rename() would replace it).
    public func place(mode: UInt32) throws(UnixLineServer.SetupError) {
        defer { self.removeStaging() }
        guard chmod(self.stagedPath, mode_t(mode)) == 0, link(self.stagedPath, self.path) == 0 else {
            throw UnixLineServer.SetupError(
                description: "cannot put the socket in place at \(self.path) with mode \(String(mode, radix: 8)): \(String(cString: strerror(errno)))"
            )
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

    /// Makes `path` bindable: creates its folder, replaces a stale socket, refuses a live one.
    private static func prepare(_ path: String) throws(UnixLineServer.SetupError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            return
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw UnixLineServer.SetupError(description: "\(path) exists and is not a socket")
        }
        if UnixLineServer.someoneListens(at: path) {
            throw UnixLineServer.SetupError(description: "\(path) is in use by another process")
        }
        unlink(path)
    }

    /// A new folder only we can enter, beside `path` (so a link puts the socket in place
    /// on the same file system).
    private static func makeStagingFolder(beside path: String) throws(UnixLineServer.SetupError) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        var template = Array(((directory.isEmpty ? "." : directory) + "/.xb-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw UnixLineServer.SetupError(description: "cannot make a private folder beside \(path): \(String(cString: strerror(errno)))")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
