/// The session's timers (``SessionTimers``): while the connection's task group runs, one
/// wake-up is set for the earliest deadline and runs what is due; arming an earlier one
/// replaces it. On a ``CallbackClock`` (the daemon's) the wake-up is the clock's callback,
/// which starts a short task only when it comes: an idle account keeps no task for its
/// timers. On another clock one task sleeps until the deadline.
///
/// The sleeping task, and the short task a callback starts, are the session's unstructured
/// tasks, against the rule of one task group per connection: a child of the group cannot be
/// cancelled alone. No wake-up outlives the group: ``stopTimers()`` runs on every way out of
/// it and cancels the wake-up, and one that came meanwhile finds its number stale.
extension XMPPSession {
    /// Arms `timer` for `deadline`, replacing the wake-up when it is set for a later one.
    func armTimer(_ timer: SessionTimers<C.Instant>.Kind, at deadline: C.Instant) {
        if self.current.timers.arm(timer, at: deadline) { self.wakeAtEarliest() }
    }

    /// The connection's task group has started: its timers run.
    func startTimers() {
        self.current.timers.running = true
        self.wakeAtEarliest()
    }

    /// The connection's task group is ending: no timer runs any more.
    func stopTimers() {
        self.current.timers.running = false
        self.wakeAtEarliest()
    }

    /// Cancels the wake-up and, while the timers run and one is armed, sets one for the
    /// earliest deadline.
    private func wakeAtEarliest() {
        self.current.timers.wake?.cancel()
        self.current.timers.wake = nil
        guard self.current.timers.running, let next = self.current.timers.earliest else {
            self.current.timers.setWake(at: nil)
            return
        }
        let number = self.current.timers.setWake(at: next)
        let executor = self.dependencies.executor
        if let clock = self.dependencies.clock as? any CallbackClock<C.Instant> {
            self.current.timers.wake = .callback(
                clock.schedule(at: next) {
                    Task(executorPreference: executor) { await self.timersDue(wake: number) }
                }
            )
            return
        }
        let clock = self.dependencies.clock
        self.current.timers.wake = .sleepingTask(
            Task(executorPreference: executor) {
                guard (try? await clock.sleep(until: next, tolerance: nil)) != nil else { return }
                await self.timersDue(wake: number)
            }
        )
    }

    /// The wake-up numbered `number` came: each timer due runs as a job beside reading,
    /// never awaited here (a handler's write can wait for a server that stopped reading,
    /// which the watchdog, a timer too, must still find); then the next is set.
    private func timersDue(wake number: Int) {
        guard self.current.timers.running, self.current.timers.wakeNumber == number else { return }
        self.current.timers.wake = nil
        for timer in self.current.timers.takeDue(now: self.dependencies.clock.now) {
            self.spawn { session in await session.timerFired(timer) }
        }
        self.wakeAtEarliest()
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
