import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ServiceLifecycle

/// Listens for the journal's notices that deliveries were queued (issue 26:
/// `LISTEN xmpp_bridge_queue`, one notice per target transport and commit) on a connection
/// and thread of its own, and tells ``heard`` which transports other instances' notices named. After a broken
/// connection it connects again and reports `nil` (notices may have been missed meanwhile:
/// every transport run here should read its queue).
final class QueueListener: Service {
    private let connect: @Sendable () throws(PostgresError) -> PostgresConnection
    /// This instance: its own commits' notices are skipped.
    private let instance: String
    private let heard: @Sendable (Set<String>?) -> Void
    private let logger: Logger
    private let stopped = NIOLockedValueBox(false)
    private let thread = NIOThreadPool(numberOfThreads: 1)

    init(instance: String, connect: @escaping @Sendable () throws(PostgresError) -> PostgresConnection, heard: @escaping @Sendable (Set<String>?) -> Void, logger: Logger) {
        self.instance = instance
        self.connect = connect
        self.heard = heard
        self.logger = logger
    }

    /// Listens until ``stop()`` or a graceful shutdown.
    func run() async throws {
        self.thread.start()
        await withGracefulShutdownHandler {
            try? await self.thread.runIfActive { self.listen() }
        } onGracefulShutdown: {
            self.stop()
        }
        try? await self.thread.shutdownGracefully()
    }

    /// Ends ``run()`` within a second.
    func stop() {
        self.stopped.withLockedValue { $0 = true }
    }

    private func listen() {
        var connection: PostgresConnection?
        var failures = 0
        while !self.stopped.withLockedValue({ $0 }) {
            do throws(PostgresError) {
                if connection == nil {
                    let fresh = try self.connect()
                    try fresh.execute("LISTEN \(PostgresJournalScript.queueChannel)")
                    connection = fresh
                    if failures > 0 {
                        self.logger.info("listening for queued deliveries again")
                        self.heard(nil)
                    }
                    failures = 0
                }
                let targets = Set(try connection!.notifications(timeout: .seconds(1)).compactMap {
                    PostgresJournalScript.target(of: $0, heardBy: self.instance)
                })
                if !targets.isEmpty { self.heard(targets) }
            } catch {
                connection = nil
                if failures % 30 == 0 {
                    self.logger.warning("cannot listen for queued deliveries; trying again", metadata: ["error": "\(error)"])
                }
                failures += 1
                // One try a second (the stop flag is read between them).
                var pause = timespec(tv_sec: 1, tv_nsec: 0)
                nanosleep(&pause, nil)
            }
        }
    }
}
