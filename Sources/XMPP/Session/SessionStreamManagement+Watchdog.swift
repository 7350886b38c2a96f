import Logging

/// The acknowledgement watchdog (``AcknowledgementWatchdog``): a connection whose server owes
/// an `<a/>` for longer than ``XMPPSessionConfiguration/acknowledgementTimeout`` is dropped
/// and resumed (XEP-0198 §4, §5); a resumed stream that never answers is given up for a new
/// session.
extension SessionStreamManagement {
    /// An `<r/>` went out: an answer is owed from now if none was (the clock is read
    /// only then: this is on every batch's path).
    func watchdogRequested(in session: isolated XMPPSession<C>) {
        guard session.dependencies.configuration.acknowledgementTimeout > .zero else { return }
        if self.acknowledgements.watchdog.requested(now: session.dependencies.clock.now) { self.armWatchdog(in: session) }
    }

    func watchdogConnectionEnded(in session: isolated XMPPSession<C>) {
        self.acknowledgements.watchdog.connectionEnded()
        session.current.timers.cancel(.watchdog)
    }

    /// One timer, for the current deadline; it re-arms itself while the deadline moves on
    /// (one wake-up per timeout at most, however many acknowledgements came meanwhile).
    private func armWatchdog(in session: isolated XMPPSession<C>) {
        guard session.current.timers.deadline(of: .watchdog) == nil, let deadline = self.acknowledgements.watchdog.deadline else { return }
        session.armTimer(.watchdog, at: deadline)
    }

    func watchdogFired(in session: isolated XMPPSession<C>) async {
        guard let connection = session.current.connection else { return }
        switch self.acknowledgements.watchdog.check(now: session.dependencies.clock.now) {
        case .idle:
            return
        case .wait:
            self.armWatchdog(in: session)
        case .dead(let resumedUnacknowledged):
            let logger = session.dependencies.logger
            let metadata: Logger.Metadata = [
                "ack_timeout": "\(session.dependencies.configuration.acknowledgementTimeout)", "unacknowledged": "\(self.machine.pending.count)",
            ]
            if resumedUnacknowledged {
                // Resuming again would reach the same unread stream: a new session instead,
                // and what was in flight is checked against the archive.
                logger.warning("the resumed stream was not read (no acknowledgement in time); starting a new session", metadata: metadata)
                session.archiveCheck.giveUpResumption(in: session)
            } else if self.machine.resumption == nil {
                // Not resumable: a new session, and what was in flight is checked likewise.
                logger.warning("no acknowledgement from the server in time; dropping the connection for a new session", metadata: metadata)
                session.archiveCheck.giveUpResumption(in: session)
            } else {
                logger.warning("no acknowledgement from the server in time; dropping the connection to resume", metadata: metadata)
            }
            self.acknowledgements.watchdog.connectionEnded()
            await connection.abort()
        }
    }
}
