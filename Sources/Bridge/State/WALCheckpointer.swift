import GRDB
import Logging
import NIOConcurrencyHelpers
import NIOPosix

/// Moves SQLite's WAL checkpoints (https://sqlite.org/wal.html#ckpt) off the journal's
/// commit path: with `synchronous=NORMAL` a commit does not fsync, but the automatic
/// checkpoint that some commit runs every 1,000 pages does, and it stalled deliveries for
/// up to 1.4 s in the relay benchmark. The state store turns automatic checkpoints off; the
/// journal calls ``commitsHappened(_:)``, and a PASSIVE checkpoint (which never waits for,
/// nor blocks, the writer) runs on this type's own thread and connection.
final class WALCheckpointer: Sendable {
    private let connection: DatabaseQueue
    private let thread: NIOThreadPool
    private let state: NIOLockedValueBox<(sinceLast: Int, running: Bool)>
    private let interval: Int
    private let logger: Logger

    /// - Parameter interval: commits between checkpoints.
    init(path: String, interval: Int = 64, logger: Logger) throws(StateStoreError) {
        do {
            var configuration = Configuration()
            configuration.label = "WALCheckpointer"
            configuration.busyMode = .timeout(StateStore.busyTimeout)
            self.connection = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StateStoreError(operation: .open, location: path, error: error)
        }
        self.interval = max(1, interval)
        self.state = NIOLockedValueBox((0, false))
        self.logger = logger
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
    }

    /// The journal committed `count` more transactions; checkpoints when enough did.
    func commitsHappened(_ count: Int) {
        let start = self.state.withLockedValue { state -> Bool in
            state.sinceLast += count
            guard state.sinceLast >= self.interval, !state.running else { return false }
            state.sinceLast = 0
            state.running = true
            return true
        }
        guard start else { return }
        self.thread.submit { _ in
            defer { self.state.withLockedValue { $0.running = false } }
            do {
                try self.connection.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
            } catch {
                self.logger.warning("WAL checkpoint failed; tried again after more commits", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Stops the thread after a last checkpoint.
    func shutdown() async {
        try? await self.thread.runIfActive { _ = try self.connection.writeWithoutTransaction { db in try db.checkpoint(.passive) } }
        try? await self.thread.shutdownGracefully()
    }
}
