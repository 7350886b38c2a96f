/// When our own `<r/>` (XEP-0198 §4) goes with a batch, and how long the timer for a batch
/// without one waits: a pure value.
///
/// A request rides the write of a batch (no write and no wake-up of its own) when enough
/// waits for an answer: `stanzas` unacknowledged stanzas, or `waiters` senders (a delivery
/// worker's window of batches in flight must not fill). Otherwise the session arms one
/// timer that asks after `delay` for whatever the batches in between left unasked.
///
/// In a steady stream, where batches keep carrying requests, that timer only serves the
/// stream's tail, and it waits `steadyDelay` instead. A timer cancelled before it fires
/// still wakes the event loop at its deadline (SwiftNIO re-arms its timer only for an
/// earlier deadline), so a 50 ms timer cancelled by every fourth batch of a 100 msg/s
/// trickle woke the loop 25 times a second for nothing; with `steadyDelay` of a second,
/// once.
///
/// Asking at once with the first batch after a quiet spell (a lone message acknowledged
/// without the delay) was tried and left out: against a Prosody frozen with deliveries in
/// flight, the early `<r/>` in the dropped connection's unread data made the server take
/// stanzas after the `h` it reported on resumption, so some were delivered twice (issue 22).
struct AcknowledgementRequestPacer {
    /// Zero: every batch carries a request.
    let delay: Duration
    let stanzas: Int
    let waiters: Int
    /// The timer's wait while batches carried a request within this time; not above
    /// `delay`: no steady-stream rule.
    let steadyDelay: Duration

    init(delay: Duration, stanzas: Int, waiters: Int, steadyDelay: Duration = .zero) {
        self.delay = delay
        self.stanzas = stanzas
        self.waiters = waiters
        self.steadyDelay = steadyDelay
    }

    /// Whether a batch about to be written, with `unacknowledged` stanzas then outstanding
    /// and `waiting` senders, carries a request.
    func batchCarriesRequest(unacknowledged: Int, waiting: Int) -> Bool {
        self.delay == .zero || unacknowledged >= self.stanzas || waiting >= self.waiters
    }

    /// How long the timer armed after a batch without a request waits, `elapsed` after the
    /// last batch that carried one (nil: none on this stream).
    func timerDelay(sinceCarriedRequest elapsed: Duration?) -> Duration {
        guard self.steadyDelay > self.delay, let elapsed, elapsed < self.steadyDelay else { return self.delay }
        return self.steadyDelay
    }
}
