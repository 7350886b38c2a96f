import Foundation
import Logging
import ServiceLifecycle

/// Tells systemd how the daemon is doing (sd_notify(3), `Type=notify`): `READY=1` once
/// the services run, `WATCHDOG=1` every half `WATCHDOG_USEC` while the relay answers
/// (`WatchdogSec=`), `STOPPING=1` when shutdown begins. Without `$NOTIFY_SOCKET` (not
/// started by systemd) it does nothing.
package struct SystemdNotifier<C: Clock>: Service where C.Duration == Duration {
    /// What the environment asks for.
    package struct Settings: Equatable {
        package var socketPath: String
        /// Nil: no watchdog.
        package var watchdogInterval: Duration?

        /// From `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` (which, when set, must
        /// be this process: the watchdog is not ours otherwise).
        package init?(environment: [String: String], pid: Int32) {
            guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
            self.socketPath = path
            self.watchdogInterval = nil
            if let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0,
                environment["WATCHDOG_PID"].map({ Int32($0) == pid }) ?? true
            {
                // Pinged at half the interval, as sd_watchdog_enabled(3) advises.
                self.watchdogInterval = .microseconds(usec / 2)
            }
        }
    }

    package let settings: Settings
    package let clock: C
    /// Returns when the relay is responsive (an actor hop through the pipeline).
    package let alive: @Sendable () async -> Void
    package let logger: Logger

    package func run() async throws {
        let socket: NotifySocket
        do {
            socket = try NotifySocket(path: self.settings.socketPath)
            try socket.send("READY=1\nSTATUS=relaying")
        } catch {
            self.logger.error("cannot notify systemd", metadata: ["error": "\(error)"])
            return
        }
        self.logger.debug("told systemd we are ready", metadata: ["watchdog": "\(self.settings.watchdogInterval.map { "\($0)" } ?? "off")"])
        await withGracefulShutdownHandler {
            guard let interval = self.settings.watchdogInterval else {
                try? await gracefulShutdown()
                return
            }
            try? await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await self.alive()
                    do {
                        try socket.send("WATCHDOG=1")
                    } catch {
                        self.logger.warning("watchdog ping not sent", metadata: ["error": "\(error)"])
                    }
                    try await self.clock.sleep(for: interval)
                }
            }
        } onGracefulShutdown: {
            try? socket.send("STOPPING=1\nSTATUS=stopping")
        }
    }

    package init(settings: Settings, clock: C, alive: @escaping @Sendable () async -> Void, logger: Logger) {
        self.settings = settings
        self.clock = clock
        self.alive = alive
        self.logger = logger
    }
}
