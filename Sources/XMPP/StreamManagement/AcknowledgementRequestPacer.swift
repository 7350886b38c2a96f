/// When our own `<r/>` (XEP-0198 §4) goes with a batch: a pure value.
///
/// A request rides the write of a batch (no write and no wake-up of its own) when enough
/// waits for an answer: `stanzas` unacknowledged stanzas, or `waiters` senders (a delivery
/// worker's window of batches in flight must not fill). Otherwise the session arms one
/// timer that asks after `delay` for whatever the batches in between left unasked.
///
/// Asking at once with the first batch after a quiet spell (a lone message confirmed
/// without the delay) was tried and left out: against a Prosody frozen with deliveries in
/// flight, the early `<r/>` in the dropped connection's unread data made the server take
/// stanzas after the `h` it reported on resumption, so some were delivered twice (issue 22).
struct AcknowledgementRequestPacer {
    /// Zero: every batch carries a request.
    let delay: Duration
    let stanzas: Int
    let waiters: Int

    /// Whether a batch about to be written, with `unacknowledged` stanzas then outstanding
    /// and `waiting` senders, carries a request.
    func batchCarriesRequest(unacknowledged: Int, waiting: Int) -> Bool {
        self.delay == .zero || unacknowledged >= self.stanzas || waiting >= self.waiters
    }
}
