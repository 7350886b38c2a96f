/// The session's timers (``SessionTimers``): while the connection's task group runs, one
/// task sleeps until the earliest deadline and runs what is due; arming an earlier one
/// replaces it. Not a loop in a task of the group: a loop would sleep in a child of its own
/// (to be woken early), two tasks an idle account keeps for life instead of one.
///
/// The sleeper is the session's one stored unstructured task, against the rule of one task
/// group per connection: a child of the group cannot be cancelled alone. It lives no longer
/// than the group: ``stopTimers()`` runs on every way out of it and cancels the sleeper, and
/// a sleeper that woke meanwhile finds its number stale.
extension XMPPSession {
    /// Arms `timer` for `deadline`, replacing the sleeping task when it sleeps until a later one.
    func armTimer(_ timer: SessionTimers<C.Instant>.Kind, at deadline: C.Instant) {
        if self.current.timers.arm(timer, at: deadline) { self.sleepUntilEarliest() }
    }

    /// The connection's task group has started: its timers run.
    func startTimers() {
        self.current.timers.running = true
        self.sleepUntilEarliest()
    }

    /// The connection's task group is ending: no timer runs any more.
    func stopTimers() {
        self.current.timers.running = false
        self.sleepUntilEarliest()
    }

    /// Cancels the sleeping task and, while the timers run and one is armed, starts one that
    /// sleeps until the earliest deadline.
    private func sleepUntilEarliest() {
        self.current.timers.sleeper?.cancel()
        self.current.timers.sleeper = nil
        guard self.current.timers.running, let next = self.current.timers.earliest else {
            self.current.timers.sleeping(until: nil)
            return
        }
        let number = self.current.timers.sleeping(until: next)
        let clock = self.dependencies.clock
        self.current.timers.sleeper = Task(executorPreference: self.dependencies.executor) {
            guard (try? await clock.sleep(until: next, tolerance: nil)) != nil else { return }
            await self.timersDue(sleeper: number)
        }
    }

    /// The sleeper numbered `number` woke: each timer due runs as a job beside the read loop,
    /// never awaited here (a handler's write can wait for a server that stopped reading,
    /// which the watchdog, a timer too, must still find); then the next sleeps.
    private func timersDue(sleeper number: Int) {
        guard self.current.timers.running, self.current.timers.sleeperNumber == number else { return }
        self.current.timers.sleeper = nil
        for timer in self.current.timers.takeDue(now: self.dependencies.clock.now) {
            self.spawn { session in await session.timerFired(timer) }
        }
        self.sleepUntilEarliest()
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
