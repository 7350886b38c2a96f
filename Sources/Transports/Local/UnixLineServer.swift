import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// A Unix-domain socket server whose clients speak lines: the socket file is made safe
/// to bind (a stale file is replaced, a live one is refused), given `mode`, and each
/// client is served concurrently until graceful shutdown or `stop` closes the server.
/// Used by the socket transport and the daemon's control socket.
public struct UnixLineServer: Sendable {
    public typealias Client = NIOAsyncChannel<LineSplitter.Line, ByteBuffer>

    /// Why the socket cannot be served.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    public let path: String
    public let mode: UInt32
    public let splitter: LineSplitter

    public init(path: String, mode: UInt32, splitter: LineSplitter) {
        self.path = path
        self.mode = mode
        self.splitter = splitter
    }

    /// Binds, calls `ready`, serves every client with `serve`, and removes the socket file at the end.
    public func run(
        group: any EventLoopGroup,
        stop: StopSignal? = nil,
        ready: @Sendable () async -> Void = {},
        serve: @escaping @Sendable (Client) async -> Void
    ) async throws {
        try self.prepare()
        let splitter = self.splitter
        // Bound in a private (0700) folder beside the path, given its mode there, then
        // moved into place: at no moment can anyone else connect to a socket with a wider
        // mode, whatever the process's umask.
        let staging = try self.makeStagingFolder()
        let stagedPath = staging + "/s"
        let bound: NIOAsyncChannel<Client, Never>
        do {
            bound = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: stagedPath, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(splitter: splitter)))
                    // Closed when dropped: a client accepted while the server closes
                    // (a `status` during shutdown) never reaches `serve`, and the scoped
                    // wrapper, `wrappingChannelSynchronously:`, traps the whole process when
                    // its writer goes away unfinished (NIOAsyncWriter's precondition).
                    return try Self.closingOnDeinit(channel)
                }
            }
        } catch {
            rmdir(staging)
            throw error
        }
        let server = bound
        // link() fails if anything took the path since prepare(); rename() would replace it.
        guard chmod(stagedPath, mode_t(self.mode)) == 0, link(stagedPath, self.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(stagedPath)
            rmdir(staging)
            try? await server.channel.close()
            throw SetupError(description: "cannot put the socket in place at \(self.path) with mode \(String(self.mode, radix: 8)): \(reason)")
        }
        unlink(stagedPath)
        rmdir(staging)
        var placed = stat()
        let inode = lstat(self.path, &placed) == 0 ? placed.st_ino : 0
        if let stop {
            Task {
                await stop.wait()
                server.channel.close(promise: nil)
            }
        }
        await ready()
        // Connected clients, so that closing the server ends their connections too (a
        // subscriber that never hangs up must not hold up shutdown or a reload).
        let connected = NIOLockedValueBox<[ObjectIdentifier: any NIOCore.Channel]>([:])
        try await withGracefulShutdownHandler {
            try await server.executeThenClose { clients in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await client in clients {
                        let id = ObjectIdentifier(client.channel)
                        connected.withLockedValue { $0[id] = client.channel }
                        group.addTask {
                            await serve(client)
                            _ = connected.withLockedValue { $0.removeValue(forKey: id) }
                        }
                    }
                    for channel in connected.withLockedValue({ Array($0.values) }) {
                        channel.close(promise: nil)
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        // Remove the socket file only if it is still ours (a successor may have bound anew).
        var current = stat()
        if lstat(self.path, &current) == 0, current.st_ino == inode {
            unlink(self.path)
        }
    }

    @available(*, deprecated, message: "deinit-based teardown, on purpose: see run()")
    private static func closingOnDeinit(_ channel: any NIOCore.Channel) throws -> Client {
        try Client(synchronouslyWrapping: channel)
    }

    /// A new folder only we can enter, beside the socket path (so a rename moves the socket
    /// into place on the same file system).
    func makeStagingFolder() throws -> String {
        let directory = (self.path as NSString).deletingLastPathComponent
        var template = Array(((directory.isEmpty ? "." : directory) + "/.xb-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw SetupError(description: "cannot make a private folder beside \(self.path): \(String(cString: strerror(errno)))")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Makes the path bindable: creates its folder, replaces a stale socket, refuses a live one.
    func prepare() throws {
        var status = stat()
        guard lstat(self.path, &status) == 0 else {
            let directory = (self.path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            return
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SetupError(description: "\(self.path) exists and is not a socket")
        }
        if Self.someoneListens(at: self.path) {
            throw SetupError(description: "\(self.path) is in use by another process")
        }
        unlink(self.path)
    }

    /// Whether a live server owns the socket file. Only "refused" (or gone) means stale;
    /// "permission denied" is someone else's live socket.
    public static func someoneListens(at path: String) -> Bool {
        switch UnixSocketConnection.connect(to: path) {
        case .success(let descriptor):
            close(descriptor)
            return true
        case .failure(let failure):
            return failure.code != ECONNREFUSED && failure.code != ENOENT
        }
    }
}
