import Logging

/// The acknowledgement watchdog in the session (``AcknowledgementWatchdog``): a connection
/// whose server owes an `<a/>` for longer than ``Configuration-swift.struct/acknowledgementTimeout``
/// is dropped and resumed (XEP-0198 §4, §5); a resumed stream that never answers is given up
/// for a new session.
extension XMPPSession {
    /// Closes the connection at once (no stream close handshake); the session treats it as
    /// a lost connection and reconnects. For a server that stopped reading.
    public func dropConnection() async {
        await self.current.connection?.abort()
    }

    /// An `<r/>` went out: an answer is owed from now if none was (the clock is read
    /// only then: this is on every batch's path).
    func watchdogRequested() {
        guard self.dependencies.configuration.acknowledgementTimeout > .zero else { return }
        if self.acknowledgements.watchdog.requested(now: self.dependencies.clock.now) { self.armWatchdog() }
    }

    /// An `<a/>` arrived.
    func watchdogAcknowledged() {
        guard self.acknowledgements.watchdog.unanswered > 0 else { return }
        self.acknowledgements.watchdog.acknowledged(now: self.dependencies.clock.now)
    }

    /// The stream was resumed: the `<r/>` sent next must be answered within the timeout.
    func watchdogResumed() {
        self.acknowledgements.watchdog.resumed()
    }

    func watchdogConnectionEnded() {
        self.acknowledgements.watchdog.connectionEnded()
        self.current.timers.cancel(.watchdog)
    }

    /// One timer, for the current deadline; it re-arms itself while the deadline moves on
    /// (one wake-up per timeout at most, however many acknowledgements came meanwhile).
    private func armWatchdog() {
        guard self.current.timers.deadline(of: .watchdog) == nil, let deadline = self.acknowledgements.watchdog.deadline else { return }
        self.armTimer(.watchdog, at: deadline)
    }

    func watchdogFired() async {
        guard let connection = self.current.connection else { return }
        switch self.acknowledgements.watchdog.check(now: self.dependencies.clock.now) {
        case .idle:
            return
        case .wait:
            self.armWatchdog()
        case .dead(let resumedUnacknowledged):
            let metadata: Logger.Metadata = [
                "ack_timeout": "\(self.dependencies.configuration.acknowledgementTimeout)", "unacknowledged": "\(self.streamManagement.pending.count)",
            ]
            if resumedUnacknowledged {
                // Resuming again would reach the same unread stream: a new session instead,
                // and what was in flight is checked against the archive.
                self.dependencies.logger.warning("the resumed stream was not read (no acknowledgement in time); starting a new session", metadata: metadata)
                self.giveUpResumption()
            } else if self.streamManagement.resumption == nil {
                // Not resumable: a new session, and what was in flight is checked likewise.
                self.dependencies.logger.warning("no acknowledgement from the server in time; dropping the connection for a new session", metadata: metadata)
                self.giveUpResumption()
            } else {
                self.dependencies.logger.warning("no acknowledgement from the server in time; dropping the connection to resume", metadata: metadata)
            }
            self.acknowledgements.watchdog.connectionEnded()
            await connection.abort()
        }
    }
}
