/// Whether an ``XMPPSession`` is stopping, and who waits on it: the reconnect backoff's
/// sleep (cut short by a stop) and callers waiting for the roster to reach a state
/// (``XMPPSession/waitForRoster(timeout:_:)``), woken as the roster changes.
struct SessionLifecycle: Sendable {
    var isStopping = false
    /// Wakes the backoff sleep under way.
    var backoff: OneShotWaiter<Void>?
    var rosterWaiters: [(condition: @Sendable (Roster) -> Bool, waiter: OneShotWaiter<Bool>)] = []

    /// Completes the roster waiters whose condition holds for `roster`.
    func rosterChanged(_ roster: Roster) {
        for entry in self.rosterWaiters where entry.condition(roster) {
            entry.waiter.complete(.success(true))
        }
    }
}
