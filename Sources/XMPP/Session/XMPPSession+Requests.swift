/// IQ requests and their answers (RFC 6120 §8.2.3): each waits for the reply from where
/// it went, or fails at its deadline (one timer for the earliest) or with the connection.
extension XMPPSession {
    /// Sends an IQ get/set and waits for its answer (RFC 6120 §8.2.3); an error answer
    /// throws ``XMPPSessionError/stanzaError(_:)``. The reply must come from where the
    /// request went.
    @_specialize(exported: true, where C == EventLoopClock)
    public func request(_ iq: IQ, timeout: Duration? = nil) async throws -> IQ {
        guard let connection = self.current.connection else { throw XMPPSessionError.notConnected }
        let id = iq.id
        // Registered before the write: the answer may come back before we wait for it.
        guard let waiter = self.current.requests.register(id) else { throw XMPPSessionError.writeFailed("a request with id \(id) is already waiting") }
        let deadline = self.dependencies.clock.now.advanced(by: timeout ?? self.dependencies.configuration.requestTimeout)
        self.machine.requestSent(id: id, to: iq.to, deadline: deadline)
        self.armExpiry()
        do {
            try await self.transmit([iq.element], on: connection)
        } catch {
            self.current.requests.fail(id, XMPPSessionError.writeFailed("\(error)"))
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
            self.current.requests.fail(id, XMPPSessionError.timedOut(id: id))
        }
        self.armExpiry()
    }

    func failPending(_ error: XMPPSessionError, keepAcknowledgements: Bool = false) {
        self.current.requests.failAll(error)
        guard !keepAcknowledgements else { return }
        for entry in self.streamManagement.acknowledgements.takeAll() { entry.waiter.complete(.failure(error)) }
        self.rooms.failUnreflected(error)
    }
}
