/// The session's timers (``SessionTimers``): one task of each connection's task group sleeps
/// until the earliest deadline and runs what is due; arming an earlier one wakes it.
extension XMPPSession {
    /// Arms `timer` for `deadline`, waking the timer task when it sleeps until a later one.
    func armTimer(_ timer: SessionTimers<C.Instant>.Kind, at deadline: C.Instant) {
        if self.current.timers.arm(timer, at: deadline) { self.current.timers.wake?.complete(.success(())) }
    }

    /// Runs the timers while the connection lasts (a task of its group: cancelled with it).
    func runTimers() async {
        let clock = self.dependencies.clock
        while !Task.isCancelled {
            let wake = OneShotWaiter<Void>()
            let next = self.current.timers.earliest
            self.current.timers.wake = wake
            self.current.timers.sleeping(until: next)
            await wake.value(until: next, on: clock, orElse: (), executor: self.dependencies.executor)
            self.current.timers.wake = nil
            self.current.timers.sleeping(until: nil)
            guard !Task.isCancelled else { return }
            // Each as a job beside the read loop, never awaited here: a handler's write can
            // wait for a server that stopped reading, which the watchdog (a timer too) must
            // still find.
            for timer in self.current.timers.takeDue(now: clock.now) {
                self.spawn { session in await session.timerFired(timer) }
            }
        }
    }

    private func timerFired(_ timer: SessionTimers<C.Instant>.Kind) async {
        switch timer {
        case .acknowledgement:
            guard let connection = self.current.connection else { return }
            await self.streamManagement.sendAcknowledgement(on: connection, now: true, in: self)
        case .acknowledgementRequest: await self.streamManagement.acknowledgementRequestDue(in: self)
        case .watchdog: await self.streamManagement.watchdogFired(in: self)
        case .requestExpiry: self.expireRequests()
        case .rooms: await self.rooms.timerFired(in: self)
        case .keepalive:
            guard let connection = self.current.connection else { return }
            await SessionKeepalive.fired(on: connection, in: self)
        }
    }
}
