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
        let server = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: self.path, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(splitter: splitter)))
                    return try Client(wrappingChannelSynchronously: channel)
                }
            }
        chmod(self.path, mode_t(self.mode))
        var bound = stat()
        let inode = lstat(self.path, &bound) == 0 ? bound.st_ino : 0
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
