import Foundation
import Logging

/// Stream management (XEP-0198) in the session: every stanza goes out through
/// ``transmit(_:on:)`` so it is numbered, inbound stanzas are acknowledged once handled, and
/// outbound stanzas are counted taken at the server's acknowledgement instead of a ping's answer.
extension XMPPSession {
    /// Writes stanzas (and SM elements) in order with one flush, numbering the stanzas
    /// while stream management counts.
    ///
    /// Each number goes to the ledger with its id before the write, so a process killed
    /// right after it resumes knowing which ids the server's `h` covers, instead of sending
    /// them twice (XEP-0198 §5). Nothing is awaited between numbering and handing the
    /// elements to the channel, whose writes keep their order: the wire order is the
    /// numbering order.
    func transmit(_ elements: [XMLElement], on connection: XMPPConnection) async throws {
        let ledger = self.dependencies.configuration.ledger
        for element in elements where Self.isStanza(element) {
            if let number = self.streamManagement.stanzaSent(element) { ledger?.sent(number, id: element[attribute: "id"]) }
        }
        // An `<r/>` rides last in a batch; the watchdog times its answer.
        if let last = elements.last, last.name == "r", last.namespace == StreamManagementStateMachine.namespace {
            self.watchdogRequested()
        }
        try await connection.send(elements)
    }

    /// Hands the resumable session (its id, location and JID) to whoever persists it when
    /// one begins, is resumed or ends, with the ids of the stanzas the server acknowledged
    /// on resumption. Positions within the session go to the ledger instead.
    func publishSessionState(acknowledgedIDs: [String] = []) {
        guard let changed = self.dependencies.configuration.sessionStateChanged else { return }
        var stored = self.streamManagement.storedSession
        stored?.jid = self.machine.ownJID.description
        stored?.acknowledgedIDs = acknowledgedIDs
        changed(stored)
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
        let restored = self.acknowledgements.restoredSession
        self.acknowledgements.restoredSession = false
        let pendingIDs = self.streamManagement.pending.map { $0[attribute: "id"] ?? "" }
        var released: [String] = []
        // What the server counted before it lost the session (`<failed h>`) moves this on.
        var acknowledged = self.streamManagement.acknowledged
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
                acknowledged = through
                released = Array(pendingIDs.prefix(count)).filter { !$0.isEmpty }
                self.dependencies.configuration.ledger?.acknowledged(through: through)
                self.releaseAcknowledgementWaiters(through: through)
                if restored, count > 0 {
                    // What the server took before the earlier process ended.
                    await self.emit(.resumedAfterRestart(handledIDs: Array(pendingIDs.prefix(count))))
                }
            case .resumed(let resend):
                resumed = true
                if let id = self.streamManagement.resumption?.id {
                    self.dependencies.configuration.ledger?.begin(sessionID: id, acknowledged: self.streamManagement.acknowledged)
                }
                self.dependencies.logger.info("stream resumed", metadata: ["resent": "\(restored ? 0 : resend.count)", "after restart": "\(restored)"])
                // After a restart only ids are known: the owner sends what was not counted.
                // The `<r/>` proves the resumed stream is read (``AcknowledgementWatchdog``).
                self.watchdogResumed()
                try? await self.transmit((restored ? [] : resend) + [self.streamManagement.requestAck()], on: connection)
            case .resumeFailed(let condition, let unacknowledged):
                self.dependencies.logger.notice(
                    "stream resumption failed; a new session", metadata: ["condition": "\(condition)", "in doubt": "\(unacknowledged.count)"]
                )
                self.giveUpResumption(pending: unacknowledged, acknowledged: acknowledged, restored: restored)
            case .enabled, .enableFailed, .protocolError:
                self.abandonResumption()
            }
        }
        return resumed
    }

    /// The old session is gone: its numbered stanzas' senders are told to try again.
    func abandonResumption() {
        self.streamManagement = StreamManagementStateMachine()
        self.dependencies.configuration.ledger?.end()
        self.publishSessionState()
        let acknowledgements = self.acknowledgements.takeAll()
        for entry in acknowledgements { entry.waiter.complete(.failure(XMPPSessionError.disconnected)) }
        self.failUnreflected(XMPPSessionError.disconnected)
    }

    /// Carries out what the SM machine decided for an element in its namespace.
    func perform(_ actions: [StreamManagementStateMachine.Action], on connection: XMPPConnection) async {
        for action in actions {
            switch action {
            case .enabled(let id, _, let max):
                self.dependencies.logger.info("stream management enabled", metadata: ["resumable": "\(id != nil)", "max": "\(max.map(String.init) ?? "-")"])
                if let id { self.dependencies.configuration.ledger?.begin(sessionID: id, acknowledged: 0) } else { self.dependencies.configuration.ledger?.end() }
                self.publishSessionState()
            case .enableFailed(let condition):
                self.dependencies.logger.notice("stream management refused; deliveries wait on a ping's answer", metadata: ["condition": "\(condition)"])
                // No acknowledgement will come for what was numbered: its senders try again.
                self.abandonResumption()
            case .acknowledged(let through, _):
                self.dependencies.configuration.ledger?.acknowledged(through: through)
                self.releaseAcknowledgementWaiters(through: through)
                self.watchdogAcknowledged()
            case .resumed, .resumeFailed:
                // Resumption happens during negotiation, not on an established stream.
                self.dependencies.logger.warning("unexpected stream resumption answer ignored")
            case .protocolError(let reason):
                self.dependencies.logger.error("stream management protocol error from the server; closing", metadata: ["reason": "\(reason)"])
                await connection.close(timeout: .zero)
            }
        }
        await self.sendAcknowledgement(on: connection)
    }

    /// Sends `<a h/>` if one is owed. The count goes to the ledger first: a session
    /// resumed after a restart must never report fewer handled stanzas than the server
    /// already heard (Prosody then closes the stream). Nothing is awaited between taking
    /// the acknowledgement and handing it to the channel, so they leave in increasing order.
    ///
    /// With an ``Configuration-swift.struct/acknowledgementDelay``, an answer that would
    /// report few new stanzas waits (one timer) unless `now`: the server asks once per
    /// answer, so a paced stream costs one `<r/>` and one `<a/>` per delay, not per stanza.
    func sendAcknowledgement(on connection: XMPPConnection, now: Bool = false) async {
        let delay = self.dependencies.configuration.acknowledgementDelay
        let batch = now || delay == .zero ? 0 : self.dependencies.configuration.acknowledgementBatch
        while let ack = self.streamManagement.takeAck(deferringBelow: batch) {
            self.dependencies.configuration.ledger?.reported(handled: self.streamManagement.handled)
            try? await connection.send([ack])
        }
        if !self.streamManagement.acknowledgementOwed {
            self.current.timers.cancel(.acknowledgement)
        } else if self.current.timers.deadline(of: .acknowledgement) == nil {
            self.armTimer(.acknowledgement, at: self.dependencies.clock.now.advanced(by: delay))
        }
    }

    func acknowledgementTimerFired() async {
        guard let connection = self.current.connection else { return }
        await self.sendAcknowledgement(on: connection, now: true)
    }

    /// The consumer is done with these inbound messages (``Message/streamNumber``), durably
    /// for the bridge (committed with their numbers); with stream management the server is
    /// told, once for all of them.
    public func handled(_ numbers: [UInt32]) async {
        for number in numbers { self.streamManagement.handled(number) }
        guard let connection = self.current.connection else { return }
        await self.sendAcknowledgement(on: connection)
    }

    /// Sends messages and returns once the server has taken them: by its stream management
    /// acknowledgement when enabled (one `<r/>` for the batch), else by a ping round trip
    /// (the server handles a stream in order). `written` is called once, when the messages
    /// are handed to the connection (or could not be), before the acknowledgement is awaited.
    public func sendAcknowledged(_ messages: [Message], written: @escaping @Sendable () -> Void = {}) async throws {
        var signalled = false
        let signal = {
            if !signalled {
                signalled = true
                written()
            }
        }
        defer { signal() }
        // A stopping session takes nothing new: it could not be acknowledged before the close.
        guard !self.lifecycle.isStopping else { throw XMPPSessionError.stopped }
        guard self.streamManagement.isCounting, let connection = self.current.connection else {
            try await self.send(messages)
            signal()
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
        self.acknowledgements.wait(
            AcknowledgementWaiter(number: last, waiter: waiter, sentAt: Date(), count: messages.count, room: self.roomSaidIn(elements), messages: elements)
        )
        // Whether a failed write leaves the batch to the resumption (read before the write:
        // the watchdog may give the session up while the write is pending).
        let resumable = self.streamManagement.resumption != nil
        let requestNow = self.requestsAcknowledgementNow(unacknowledged: self.streamManagement.pending.count + messages.count)
        if requestNow { elements.append(self.streamManagement.requestAck()) }
        do {
            try await self.transmit(elements, on: connection)
        } catch where !resumable {
            waiter.complete(.failure(XMPPSessionError.writeFailed("\(error)")))
        } catch {
            // Numbered, so the server may have part of it: the connection's end settles it
            // (resumed, or in doubt and looked up in the archive), never a second send here.
        }
        if !requestNow { self.armAcknowledgementRequest() }
        signal()
        try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.complete(.failure(XMPPSessionError.stopped))
        }
    }

    /// Whether a batch's `<r/>` goes with it (``AcknowledgementRequestPacer``); when it
    /// does, the timer for a later one is not needed.
    private func requestsAcknowledgementNow(unacknowledged: Int) -> Bool {
        let request = self.dependencies.configuration.acknowledgementRequests.batchCarriesRequest(unacknowledged: unacknowledged, waiting: self.acknowledgements.count)
        if request {
            self.current.timers.cancel(.acknowledgementRequest)
            self.acknowledgements.lastCarriedRequest = self.dependencies.clock.now
        }
        return request
    }

    /// One `<r/>` after the delay, for everything written until then (one timer).
    private func armAcknowledgementRequest() {
        guard self.current.timers.deadline(of: .acknowledgementRequest) == nil else { return }
        let now = self.dependencies.clock.now
        let delay = self.dependencies.configuration.acknowledgementRequests.timerDelay(sinceCarriedRequest: self.acknowledgements.lastCarriedRequest.map { $0.duration(to: now) })
        self.armTimer(.acknowledgementRequest, at: now.advanced(by: delay))
    }

    func acknowledgementRequestDue() async {
        guard self.streamManagement.isCounting, !self.streamManagement.pending.isEmpty, let connection = self.current.connection else { return }
        try? await self.transmit([self.streamManagement.requestAck()], on: connection)
    }

    /// Returns once the server has taken everything sent so far: by a stream management
    /// acknowledgement when enabled, else by a ping round trip.
    public func waitForAcknowledgement() async throws {
        guard self.streamManagement.isCounting, let connection = self.current.connection else {
            try await self.pingServer()
            return
        }
        let waiter = OneShotWaiter<Void>()
        self.acknowledgements.wait(AcknowledgementWaiter(number: self.streamManagement.sent, waiter: waiter, sentAt: nil, count: 0))
        do {
            try await self.transmit([self.streamManagement.requestAck()], on: connection)
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
    /// acknowledge what is still unacknowledged, so a batch in flight ends delivered instead of
    /// being sent again by whoever takes over the queue (a reload's new session).
    func settleAcknowledgements() async {
        guard self.streamManagement.isCounting, !self.acknowledgements.isEmpty else { return }
        let clock = self.dependencies.clock
        let deadline = clock.now.advanced(by: self.dependencies.configuration.stopAcknowledgementTimeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.waitForAcknowledgement() }
            group.addTask { _ = try? await clock.sleep(until: deadline, tolerance: nil) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Completes the waiters whose stanza number is covered by `through` (modulo 2³²).
    func releaseAcknowledgementWaiters(through: UInt32) {
        for entry in self.acknowledgements.covered(through: through) {
            if let room = entry.room {
                // Into a room: done once the room has reflected it too.
                self.parkUntilReflected(InDoubtMessages.Batch(messages: entry.messages, waiter: entry.waiter, room: room), sentAt: entry.sentAt)
            } else {
                entry.waiter.complete(.success(()))
            }
        }
    }
}
