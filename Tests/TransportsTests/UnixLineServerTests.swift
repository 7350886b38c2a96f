import Foundation
import NIOPosix
import Testing
import TransportCore

@testable import LocalTransport

/// Sockets are created safe on every path (issue 13, defect 5): bound in a private
/// folder, given their mode there, then moved into place.
@Suite("UnixLineServer socket creation")
struct UnixLineServerTests {
    @Test(arguments: [UInt32(0o600), 0o660])
    func theSocketAppearsWithItsModeAndNoStagingFolderRemains(mode: UInt32) async throws {
        let folder = NSTemporaryDirectory() + "socket-tests-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/s.sock"
        let server = UnixLineServer(path: path, mode: mode, splitter: LineSplitter())
        let stop = StopSignal()
        let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
        let running = Task {
            // Every accepted client must be closed through executeThenClose (NIO traps on a
            // dropped one): someoneListens(at:) below connects one.
            try await server.run(group: MultiThreadedEventLoopGroup.singleton, stop: stop, ready: { readySignal.yield() }) { client in
                try? await client.executeThenClose { _, _ in }
            }
        }
        var iterator = ready.makeAsyncIterator()
        _ = await iterator.next()
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == mode_t(mode))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["s.sock"])
        #expect(UnixLineServer.someoneListens(at: path))
        stop.stop()
        try await running.value
        #expect(lstat(path, &status) != 0, "the socket file is removed at the end")
    }

    @Test func aFolderThatCannotHoldTheStagingFolderFailsWithTheReason() async throws {
        let server = UnixLineServer(path: "/proc/self/no-such-place/s.sock", mode: 0o600, splitter: LineSplitter())
        await #expect(throws: (any Error).self) {
            try await server.run(group: MultiThreadedEventLoopGroup.singleton) { _ in }
        }
    }
}
