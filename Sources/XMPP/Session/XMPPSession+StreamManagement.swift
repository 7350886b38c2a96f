import Logging

/// Stream management (XEP-0198) in the session: every stanza goes out through
/// ``transmit(_:on:)`` so it is numbered, inbound stanzas are acknowledged once handled, and
/// outbound stanzas can be confirmed by the server's acknowledgement instead of a ping.
extension XMPPSession {
    /// Writes stanzas (and SM elements) in order with one flush, numbering the stanzas
    /// while stream management counts.
    ///
    /// When the owner persists sessions, the state that lists these stanzas as sent but not
    /// yet acknowledged is made durable before they are written: a process killed right
    /// after the write then resumes knowing their ids, and the server's `h` confirms them
    /// instead of their being sent twice (XEP-0198 §5). Transmissions take turns, so what
    /// goes on the wire is in numbering order although the commit is awaited.
    func transmit(_ elements: [XMLElement], on connection: XMPPConnection) async throws {
        let durable = self.configuration.persistSessionState != nil && elements.contains(where: Self.isStanza)
        if durable { await self.takeTransmitTurn() }
        defer { if durable { self.passTransmitTurn() } }
        var numbered = false
        for element in elements where Self.isStanza(element) {
            numbered = self.streamManagement.stanzaSent(element) != nil || numbered
        }
        if numbered {
            self.publishSessionState()
            if let persist = self.configuration.persistSessionState, var stored = self.streamManagement.storedSession {
                stored.jid = self.machine.ownJID.description
                if !(await persist(stored)) {
                    // Sent anyway: a crash before the next commit may then repeat them, never lose them.
                    self.logger.error("cannot store the stream management state before sending; a crash now could send these again")
                }
            }
        }
        try await connection.send(elements)
    }

    private func takeTransmitTurn() async {
        while self.transmitting {
            await withCheckedContinuation { self.transmitWaiters.append($0) }
        }
        self.transmitting = true
    }

    private func passTransmitTurn() {
        self.transmitting = false
        if !self.transmitWaiters.isEmpty { self.transmitWaiters.removeFirst().resume() }
    }

    /// Hands the resumable session's state to whoever persists it, with the ids of the
    /// stanzas the server acknowledged since the last time.
    func publishSessionState(acknowledgedIDs: [String] = []) {
        guard let changed = self.configuration.sessionStateChanged else { return }
        var stored = self.streamManagement.storedSession
        stored?.jid = self.machine.ownJID.description
        stored?.acknowledgedIDs = acknowledgedIDs
        changed(stored)
    }

    static func ids(_ elements: ArraySlice<XMLElement>) -> [String] {
        elements.compactMap { $0[attribute: "id"] }
    }

    static func isStanza(_ element: XMLElement) -> Bool {
        switch element.name {
        case "message", "presence", "iq": element.namespace == XMPPNamespace.client
        default: false
        }
    }

    /// What to ask the server to resume, when the last stream can be (XEP-0198 §5).
    func resumeRequest() -> StreamNegotiationStateMachine.ResumeRequest? {
        let jid = self.machine.ownJID
        guard let resumption = self.streamManagement.resumption, jid.resourcepart != nil else { return nil }
        return StreamNegotiationStateMachine.ResumeRequest(previousID: resumption.id, handled: resumption.handled, jid: jid)
    }

    /// Feeds the server's answer to `<resume/>` to the SM machine; true when the stream
    /// continues the old session (its unacknowledged stanzas are sent again, in order).
    func applyResumeAnswer(on connection: XMPPConnection) async -> Bool {
        let restored = self.restoredSession
        self.restoredSession = false
        let pendingIDs = self.streamManagement.pending.map { $0[attribute: "id"] ?? "" }
        var released: [String] = []
        defer { self.publishSessionState(acknowledgedIDs: released) }
        guard let answer = connection.resumeAnswer, self.streamManagement.resumeSent(), let actions = self.streamManagement.received(answer) else {
            if self.streamManagement.resumption != nil {
                // We had a session to resume but the server did not offer stream management.
                self.abandonResumption()
            }
            return false
        }
        var resumed = false
        for action in actions {
            switch action {
            case .acknowledged(let through, let count):
                released = Array(pendingIDs.prefix(count)).filter { !$0.isEmpty }
                self.releaseAcknowledgementWaiters(through: through)
                if restored, count > 0 {
                    // What the server took before the earlier process ended.
                    await self.emit(.resumedAfterRestart(handledIDs: Array(pendingIDs.prefix(count))))
                }
            case .resumed(let resend):
                resumed = true
                self.logger.info("stream resumed", metadata: ["resent": "\(restored ? 0 : resend.count)", "after restart": "\(restored)"])
                // After a restart only ids are known: the owner sends what was not counted.
                if !restored { try? await self.transmit(resend, on: connection) }
            case .resumeFailed(let condition, _):
                self.logger.notice("stream resumption failed; a new session", metadata: ["condition": "\(condition)"])
                self.abandonResumption()
            case .enabled, .enableFailed, .protocolError:
                self.abandonResumption()
            }
        }
        return resumed
    }

    /// The old session is gone: its numbered stanzas' senders are told to try again.
    func abandonResumption() {
        self.streamManagement = StreamManagementStateMachine()
        self.publishSessionState()
        let acknowledgements = self.acknowledgementWaiters
        self.acknowledgementWaiters.removeAll()
        for entry in acknowledgements { entry.waiter.complete(.failure(XMPPSessionError.disconnected)) }
    }

    /// Carries out what the SM machine decided for an element in its namespace;
    /// `released`: the stanzas unacknowledged before it.
    func perform(_ actions: [StreamManagementStateMachine.Action], released: [XMLElement], on connection: XMPPConnection) async {
        for action in actions {
            switch action {
            case .enabled(let id, _, let max):
                self.logger.info("stream management enabled", metadata: ["resumable": "\(id != nil)", "max": "\(max.map(String.init) ?? "-")"])
                self.publishSessionState()
            case .enableFailed(let condition):
                self.logger.notice("stream management refused; confirming deliveries by ping", metadata: ["condition": "\(condition)"])
                // No acknowledgement will come for what was numbered: its senders try again.
                self.abandonResumption()
            case .acknowledged(let through, let count):
                self.releaseAcknowledgementWaiters(through: through)
                self.publishSessionState(acknowledgedIDs: Self.ids(released.prefix(count)))
            case .resumed, .resumeFailed:
                // Resumption happens during negotiation, not on an established stream.
                self.logger.warning("unexpected stream resumption answer ignored")
            case .protocolError(let reason):
                self.logger.error("stream management protocol error from the server; closing", metadata: ["reason": "\(reason)"])
                await connection.close(timeout: .zero)
            }
        }
        await self.sendAcknowledgement(on: connection)
    }

    /// Sends `<a h/>` if one is owed. The count is made durable first (when the owner
    /// persists sessions): a session resumed after a restart must never report fewer
    /// handled stanzas than the server already heard (Prosody then closes the stream).
    /// One acknowledgement at a time, so they reach the server in increasing order.
    func sendAcknowledgement(on connection: XMPPConnection) async {
        guard !self.acknowledging else { return }  // the one under way sends what is owed after it
        self.acknowledging = true
        defer { self.acknowledging = false }
        while let ack = self.streamManagement.takeAck() {
            self.publishSessionState()
            if let persist = self.configuration.persistSessionState, var stored = self.streamManagement.storedSession,
                !self.isDurable(handled: stored.handled, session: stored.id)
            {
                stored.jid = self.machine.ownJID.description
                guard await persist(stored) else {
                    self.logger.error("cannot store the stream management state; the server's request for an acknowledgement stays unanswered")
                    return
                }
                self.durableHandled = (stored.id, stored.handled)
            }
            try? await connection.send([ack])
        }
    }

    /// Whether the owner already holds `handled` (or more) for this session durably: the
    /// messages it confirmed through ``handled(_:)`` were committed with their numbers.
    func isDurable(handled: UInt32, session: String) -> Bool {
        guard let durable = self.durableHandled, durable.session == session else { return false }
        return durable.handled &- handled < UInt32(1) << 31
    }

    /// The consumer is done with these inbound messages (``Message/streamNumber``); with
    /// stream management the server is told, once for all of them. `committed`: the
    /// highest of them whose number the owner stored durably with the message (then the
    /// acknowledgement needs no extra commit when it reports no more than that).
    public func handled(_ numbers: [UInt32], committed: UInt32? = nil) async {
        for number in numbers { self.streamManagement.handled(number) }
        if let committed, let session = self.streamManagement.resumption?.id, !self.isDurable(handled: committed, session: session) {
            self.durableHandled = (session, committed)
        }
        guard let connection = self.connection else { return }
        await self.sendAcknowledgement(on: connection)
    }

    /// Sends messages and returns once the server has taken them: by its stream management
    /// acknowledgement when enabled (one `<r/>` for the batch), else by a ping round trip
    /// (the server handles a stream in order).
    public func sendConfirmed(_ messages: [Message]) async throws {
        // A stopping session takes nothing new: it could not be confirmed before the close.
        guard !self.isStopping else { throw XMPPSessionError.stopped }
        guard self.streamManagement.isCounting, let connection = self.connection else {
            try await self.send(messages)
            try await self.pingServer()
            return
        }
        var elements: [XMLElement] = []
        elements.reserveCapacity(messages.count + 1)
        for var message in messages {
            if message.id == nil { message.id = self.nextID() }
            elements.append(message.element)
        }
        let last = self.streamManagement.sent &+ UInt32(truncatingIfNeeded: elements.count)
        let waiter = OneShotWaiter<Void>()
        self.acknowledgementWaiters.append((last, waiter))
        elements.append(self.streamManagement.requestAck())
        do {
            try await self.transmit(elements, on: connection)
        } catch {
            waiter.complete(.failure(XMPPSessionError.writeFailed("\(error)")))
        }
        try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.complete(.failure(XMPPSessionError.stopped))
        }
    }

    /// Returns once the server has taken everything sent so far: by a stream management
    /// acknowledgement when enabled, else by a ping round trip.
    public func confirmAllSent() async throws {
        guard self.streamManagement.isCounting, let connection = self.connection else {
            try await self.pingServer()
            return
        }
        let waiter = OneShotWaiter<Void>()
        self.acknowledgementWaiters.append((self.streamManagement.sent, waiter))
        do {
            try await connection.send([self.streamManagement.requestAck()])
        } catch {
            waiter.complete(.failure(XMPPSessionError.writeFailed("\(error)")))
        }
        try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.complete(.failure(XMPPSessionError.stopped))
        }
    }

    /// Before a clean close: waits, at most `stopAcknowledgementTimeout`, for the server to
    /// acknowledge what is still unconfirmed, so a batch in flight ends delivered instead of
    /// being sent again by whoever takes over the queue (a reload's new session).
    func settleAcknowledgements() async {
        guard self.streamManagement.isCounting, !self.acknowledgementWaiters.isEmpty else { return }
        let clock = self.clock
        let deadline = clock.now.advanced(by: self.configuration.stopAcknowledgementTimeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.confirmAllSent() }
            group.addTask { _ = try? await clock.sleep(until: deadline, tolerance: nil) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Completes the waiters whose stanza number is covered by `through` (modulo 2³²).
    func releaseAcknowledgementWaiters(through: UInt32) {
        var remaining: [(number: UInt32, waiter: OneShotWaiter<Void>)] = []
        for entry in self.acknowledgementWaiters {
            // Covered when the number is no further ahead of the last acknowledged than 0.
            if through &- entry.number < UInt32(1) << 31 {
                entry.waiter.complete(.success(()))
            } else {
                remaining.append(entry)
            }
        }
        self.acknowledgementWaiters = remaining
    }
}
