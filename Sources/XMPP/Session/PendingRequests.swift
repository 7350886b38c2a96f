/// The IQ requests waiting for their answers (RFC 6120 §8.2.3), by id: each registered
/// before its write (the answer may come first), completed by its answer, failed at its
/// deadline or with the connection. Who may answer is the session machine's to check.
struct PendingRequests: Sendable {
    private var waiters: [String: OneShotWaiter<IQ>] = [:]

    var count: Int { self.waiters.count }

    /// A waiter for the request `id`; nil when one with that id already waits.
    mutating func register(_ id: String) -> OneShotWaiter<IQ>? {
        guard self.waiters[id] == nil else { return nil }
        let waiter = OneShotWaiter<IQ>()
        self.waiters[id] = waiter
        return waiter
    }

    /// Completes the request `id` with its answer: a `result`, or an `error` answer as
    /// ``XMPPSessionError/stanzaError(_:)``. An answer nobody waits for is dropped.
    mutating func answer(_ id: String, with iq: IQ) {
        guard let waiter = self.waiters.removeValue(forKey: id) else { return }
        if iq.type == .error {
            waiter.complete(.failure(XMPPSessionError.stanzaError(iq.error ?? StanzaError(.undefinedCondition))))
        } else {
            waiter.complete(.success(iq))
        }
    }

    /// Fails the request `id`, if it still waits.
    mutating func fail(_ id: String, _ error: XMPPSessionError) {
        self.waiters.removeValue(forKey: id)?.complete(.failure(error))
    }

    /// Fails every request still waiting (the connection is gone).
    mutating func failAll(_ error: XMPPSessionError) {
        let waiting = self.waiters.values
        self.waiters.removeAll()
        for waiter in waiting { waiter.complete(.failure(error)) }
    }
}
