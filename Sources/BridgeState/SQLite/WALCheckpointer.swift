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
///
/// A PASSIVE checkpoint copies only the frames written before it began, and the WAL starts
/// over from its beginning only once every frame is copied: under a steady stream of
/// commits that never happened, and the WAL grew without end (a gigabyte after a few
/// relay benchmark runs), each commit writing to fresh blocks of the file. So when the
/// WAL is ``restartFrames`` frames or more after a PASSIVE checkpoint, a RESTART
/// checkpoint follows: it waits for the commit under way, takes the write lock
/// (the journal's next commit waits), copies the few frames left, syncs the database file
/// and waits for readers to leave the WAL (a `history` search: tens of milliseconds), and
/// the next commit writes the WAL from its start again, over blocks the file has. Only
/// the journal's SQLite commits wait meanwhile: deliveries go from the intake log. It
/// waits up to the store's busy timeout for the lock and the readers.
package final class WALCheckpointer: Sendable {
    private let connection: DatabaseQueue
    private let thread: NIOThreadPool
    private let state: NIOLockedValueBox<(sinceLast: Int, running: Bool)>
    private let interval: Int
    /// A WAL this many frames long after a PASSIVE checkpoint is made to start over.
    package let restartFrames: Int
    private let logger: Logger

    /// - Parameters:
    ///   - interval: commits between checkpoints.
    ///   - restartFrames: the WAL's length in frames from which it is made to start over
    ///     (1,024 frames: 4 MiB, about SQLite's own automatic checkpoint).
    package init(path: String, interval: Int = 16, restartFrames: Int = 1_024, logger: Logger) throws(StateStoreError) {
        do {
            var configuration = Configuration()
            configuration.label = "WALCheckpointer"
            configuration.busyMode = .timeout(SQLiteStateStore.busyTimeout)
            self.connection = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StateStoreError(operation: .open, location: path, error: error)
        }
        self.interval = max(1, interval)
        self.restartFrames = max(1, restartFrames)
        self.state = NIOLockedValueBox((0, false))
        self.logger = logger
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
    }

    /// The journal committed `count` more transactions; checkpoints when enough did.
    package func commitsHappened(_ count: Int) {
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
                try self.connection.writeWithoutTransaction { db in
                    let passive = try db.checkpoint(.passive)
                    // Even a PASSIVE checkpoint that copied every frame did not make the WAL
                    // start over under back-to-back commits (WALCheckpointerTests).
                    guard passive.walFrameCount >= self.restartFrames else { return }
                    try self.restart(db)
                }
            } catch {
                self.logger.warning("WAL checkpoint failed; tried again after more commits", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A RESTART checkpoint; one that found no gap within the busy timeout is tried again
    /// at the next round.
    private func restart(_ db: Database) throws {
        do {
            _ = try db.checkpoint(.restart)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            self.logger.debug("WAL restart found no gap between commits and readers; tried again later")
        }
    }

    /// Stops the thread after a last checkpoint.
    package func shutdown() async {
        try? await self.thread.runIfActive { _ = try self.connection.writeWithoutTransaction { db in try db.checkpoint(.passive) } }
        try? await self.thread.shutdownGracefully()
    }
}
