import Logging
import NIOConcurrencyHelpers

/// The connection notices of all the accounts of a process, through one
/// ``ConnectionNoticeThrottle``: a session hands it what it would have logged as a warning,
/// and it writes that line, or holds it back and writes the window's summary later. Shared
/// by every account (the bridge makes one); without it a session logs each notice itself.
public final class ConnectionNotices<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    private let throttle: NIOLockedValueBox<ConnectionNoticeThrottle<C.Instant>>
    private let clock: C
    private let logger: Logger

    /// - Parameter logger: where summaries go (each notice goes to its account's logger).
    public init(configuration: ConnectionNoticeThrottle<C.Instant>.Configuration = .init(), clock: C, logger: Logger) {
        self.throttle = NIOLockedValueBox(ConnectionNoticeThrottle(configuration: configuration))
        self.clock = clock
        self.logger = logger
    }

    /// Writes `kind` for `account` to its `logger` with `metadata`, unless held back.
    public func notice(_ kind: ConnectionNoticeThrottle<C.Instant>.Kind, account: JID, reason: String?, metadata: Logger.Metadata, logger: Logger) {
        let account = account.bare.description
        let now = self.clock.now
        let (decision, summary) = self.throttle.withLockedValue { $0.notice(kind, account: account, reason: reason, at: now) }
        self.write(summary)
        if decision == .log { logger.warning("\(kind.rawValue)", metadata: metadata) }
    }

    /// An account logged in: a window that ended is summed up now.
    public func settled() {
        let now = self.clock.now
        self.write(self.throttle.withLockedValue { $0.settled(at: now) })
    }

    private func write(_ summary: ConnectionNoticeThrottle<C.Instant>.Summary?) {
        guard let summary else { return }
        self.logger.warning("\(summary)")
    }
}
