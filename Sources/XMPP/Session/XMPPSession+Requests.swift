/// IQ requests and their answers (RFC 6120 §8.2.3): each waits for the reply from where
/// it went, or fails at its deadline (one timer for the earliest) or with the connection.
extension XMPPSession {
    /// Sends an IQ get/set and waits for its answer (RFC 6120 §8.2.3); an error answer
    /// throws ``XMPPSessionError/stanzaError(_:)``. The reply must come from where the
    /// request went.
    public func request(_ iq: IQ, timeout: Duration? = nil) async throws -> IQ {
        guard let connection = self.current.connection else { throw XMPPSessionError.notConnected }
        let id = iq.id
        guard self.current.requests[id] == nil else { throw XMPPSessionError.writeFailed("a request with id \(id) is already waiting") }
        let deadline = self.dependencies.clock.now.advanced(by: timeout ?? self.dependencies.configuration.requestTimeout)
        // Registered before the write: the answer may come back before we wait for it.
        let waiter = OneShotWaiter<IQ>()
        self.current.requests[id] = waiter
        self.machine.requestSent(id: id, to: iq.to, deadline: deadline)
        self.armExpiry()
        do {
            try await self.transmit([iq.element], on: connection)
        } catch {
            self.fail(id, XMPPSessionError.writeFailed("\(error)"))
        }
        return try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.complete(.failure(XMPPSessionError.stopped))
        }
    }

    /// Keeps one timer, for the earliest request deadline the machine knows.
    func armExpiry() {
        guard let next = self.machine.nextRequestDeadline else { return }
        if let armed = self.current.timers.deadline(of: .requestExpiry), armed <= next { return }
        self.armTimer(.requestExpiry, at: next)
    }

    func expireRequests() {
        for id in self.machine.expireRequests(now: self.dependencies.clock.now) {
            self.fail(id, XMPPSessionError.timedOut(id: id))
        }
        self.armExpiry()
    }

    func fail(_ id: String, _ error: XMPPSessionError) {
        self.current.requests.removeValue(forKey: id)?.complete(.failure(error))
    }

    func failPending(_ error: XMPPSessionError, keepAcknowledgements: Bool = false) {
        for waiter in self.current.takeRequests() { waiter.complete(.failure(error)) }
        guard !keepAcknowledgements else { return }
        let acknowledgements = self.acknowledgements.takeAll()
        for entry in acknowledgements { entry.waiter.complete(.failure(error)) }
        self.failUnreflected(error)
    }
}
