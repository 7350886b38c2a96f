import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
import TransportCore
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
        let splitter = self.splitter
        // Bound in a private (0700) folder beside the path, given its mode there, then
        // moved into place: at no moment can anyone else connect to a socket with a wider
        // mode, whatever the process's umask.
        let socket = try StagedUnixSocket(path: self.path)
        let bound: NIOAsyncChannel<Client, Never>
        do {
            bound = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: socket.stagedPath, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(splitter: splitter)))
                    // Closed when dropped: a client accepted while the server closes
                    // (a `status` during shutdown) never reaches `serve`, and the scoped
                    // wrapper, `wrappingChannelSynchronously:`, traps the whole process when
                    // its writer goes away unfinished (NIOAsyncWriter's precondition).
                    return try (DeinitTeardown.self as any ClientWrapping.Type).wrap(channel)
                }
            }
        } catch {
            socket.removeStaging()
            throw error
        }
        let server = bound
        do {
            try socket.place(mode: self.mode)
        } catch {
            try? await server.channel.close()
            throw error
        }
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
        socket.removeIfOurs()
    }

    /// Wraps an accepted connection so that it closes when dropped (see `run()`).
    fileprivate protocol ClientWrapping {
        static func wrap(_ channel: any NIOCore.Channel) throws -> Client
    }

    /// NIO deprecates the deinit-based teardown; it is chosen on purpose here. Called
    /// through ``ClientWrapping``, so the deprecation is acknowledged once, not warned at
    /// every build.
    fileprivate enum DeinitTeardown: ClientWrapping {
        @available(*, deprecated, message: "deinit-based teardown, on purpose: see run()")
        static func wrap(_ channel: any NIOCore.Channel) throws -> Client {
            try Client(synchronouslyWrapping: channel)
        }
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
