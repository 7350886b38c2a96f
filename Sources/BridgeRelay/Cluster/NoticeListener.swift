import BridgeState
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ServiceLifecycle

/// Listens for other instances' notices (issue 26) on a connection and thread of its own:
/// the journal's that deliveries were queued (`LISTEN xmpp_bridge_queue`, one per target
/// transport and commit), handed to ``heard`` by transport, and control commands'
/// (``ControlNotice``), handed to ``control``. After a broken connection it connects again
/// and reports `nil` to ``heard`` (notices may have been missed meanwhile: every transport
/// run here should read its queue).
package final class NoticeListener: Service {
    private let connect: @Sendable () throws(PostgresError) -> PostgresConnection
    /// This instance: its own commits' notices are skipped.
    private let instance: String
    private let heard: @Sendable (Set<String>?) -> Void
    /// Hears the other instances' control notices (``ControlNotice``).
    private let control: @Sendable (ControlNotice) -> Void
    private let logger: Logger
    private let stopped = NIOLockedValueBox(false)
    private let thread = NIOThreadPool(numberOfThreads: 1)

    package init(
        instance: String, connect: @escaping @Sendable () throws(PostgresError) -> PostgresConnection, heard: @escaping @Sendable (Set<String>?) -> Void,
        control: @escaping @Sendable (ControlNotice) -> Void, logger: Logger
    ) {
        self.instance = instance
        self.connect = connect
        self.heard = heard
        self.control = control
        self.logger = logger
    }

    /// Listens until ``stop()`` or a graceful shutdown.
    package func run() async throws {
        self.thread.start()
        await withGracefulShutdownHandler {
            try? await self.thread.runIfActive { self.listen() }
        } onGracefulShutdown: {
            self.stop()
        }
        try? await self.thread.shutdownGracefully()
    }

    /// Ends ``run()`` within a second.
    package func stop() {
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
                    try fresh.execute("LISTEN \(ControlNotice.channel)")
                    connection = fresh
                    if failures > 0 {
                        self.logger.info("listening for other instances' notices again")
                        // What was missed meanwhile: every queue read again, and the routes.
                        self.heard(nil)
                        self.control(.routesChanged)
                    }
                    failures = 0
                }
                var targets: Set<String> = []
                for notice in try connection!.notifications(timeout: .seconds(1)) {
                    if notice.channel == ControlNotice.channel {
                        if let control = ControlNotice(payload: notice.payload, heardBy: self.instance) { self.control(control) }
                    } else if let target = PostgresJournalScript.target(of: notice.payload, heardBy: self.instance) {
                        targets.insert(target)
                    }
                }
                if !targets.isEmpty { self.heard(targets) }
            } catch {
                connection = nil
                if failures % 30 == 0 {
                    self.logger.warning("cannot listen for other instances' notices; trying again", metadata: ["error": "\(error)"])
                }
                failures += 1
                // One try a second (the stop flag is read between them).
                var pause = timespec(tv_sec: 1, tv_nsec: 0)
                nanosleep(&pause, nil)
            }
        }
    }
}
