/// When our own `<r/>` (XEP-0198 §4) goes out: a pure value, time passed in.
///
/// A request rides the write of a batch (no write and no wake-up of its own) when the last
/// one is at least `delay` old, or when enough waits for an answer: `stanzas` unacknowledged
/// stanzas, or `waiters` senders (a delivery worker's window of batches in flight must not
/// fill). So a lone message is confirmed at once, a trickle asks once per `delay`, and a
/// burst asks every `stanzas`. Otherwise the session arms one timer that asks after `delay`
/// for whatever the batches in between left unasked.
struct AcknowledgementRequestPacer<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// Zero: every batch carries a request.
    let delay: Duration
    let stanzas: Int
    let waiters: Int
    /// When the last request went out (nil: none yet on this session).
    private(set) var lastRequest: Instant?

    init(delay: Duration, stanzas: Int, waiters: Int) {
        self.delay = delay
        self.stanzas = stanzas
        self.waiters = waiters
    }

    /// A batch is about to be written with `unacknowledged` stanzas then outstanding and
    /// `waiting` senders; true when it carries a request (recorded as sent `now`).
    mutating func batchWritten(unacknowledged: Int, waiting: Int, now: Instant) -> Bool {
        let due = self.lastRequest.map { $0.duration(to: now) >= self.delay } ?? true
        guard self.delay == .zero || due || unacknowledged >= self.stanzas || waiting >= self.waiters else { return false }
        self.lastRequest = now
        return true
    }

    /// A request went out on its own (the timer, or a caller waiting for everything).
    mutating func requested(at now: Instant) {
        self.lastRequest = now
    }
}
