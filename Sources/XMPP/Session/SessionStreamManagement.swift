import Foundation
import Logging

/// Stream management (XEP-0198) in a session: the counting machine
/// (``StreamManagementStateMachine``), the senders waiting for the server's
/// acknowledgements and the watchdog on them (``Acknowledgements``), resumption (§5), and the
/// acknowledgements we owe (§4). Every stanza goes out through
/// ``XMPPSession/transmit(_:on:)``, so it is numbered.
///
/// Owned by its session and run on it (each method takes the session `isolated`): what the
/// methods read and change between two suspension points nothing else changes.
final class SessionStreamManagement<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// XEP-0198 counting and acknowledgements for the current connection.
    var machine = StreamManagementStateMachine()
    /// The senders waiting for the server's acknowledgements, and the watchdog on them.
    var acknowledgements: Acknowledgements<C.Instant>

    init(acknowledgementTimeout: Duration) {
        self.acknowledgements = Acknowledgements(timeout: acknowledgementTimeout)
    }

    /// Takes up the stream management session this host's earlier process stored, or else
    /// the one an earlier owner of the account left (XEP-0198 §5, resumed on the first
    /// connect); returns the full JID it was bound to, nil when there is none, or it was
    /// bound to another account.
    func adoptStoredSession(_ configuration: XMPPSessionConfiguration<C>, ownJID: JID) -> JID? {
        let own = configuration.storedSession.map { ($0, StreamManagementStateMachine(restoring: $0)) }
        guard configuration.streamManagement,
            let (stored, adopted) = own ?? configuration.priorSession?.session.map({ ($0, StreamManagementStateMachine(inheriting: $0)) })
        else { return nil }
        guard let jid = stored.jid.flatMap({ try? JID($0) }), jid.bare == ownJID.bare, jid.resourcepart != nil else { return nil }
        self.machine = adopted
        self.acknowledgements.restoredSession = true
        return jid
    }

    /// Hands the resumable session (its id, location and JID) to whoever persists it when
    /// one begins, is resumed or ends, with the ids of the stanzas the server acknowledged
    /// on resumption. Positions within the session go to the ledger instead.
    func publishSessionState(acknowledgedIDs: [String] = [], in session: isolated XMPPSession<C>) {
        guard let changed = session.dependencies.configuration.sessionStateChanged else { return }
        var stored = self.machine.storedSession
        stored?.jid = session.machine.ownJID.description
        stored?.acknowledgedIDs = acknowledgedIDs
        changed(stored)
    }

    /// The session ended cleanly or cannot be resumed: nothing to keep for the next start.
    func end(in session: isolated XMPPSession<C>) {
        self.machine = StreamManagementStateMachine()
        session.dependencies.configuration.ledger?.end()
        self.publishSessionState(in: session)
    }

    /// What to ask the server to resume, when the last stream can be (XEP-0198 §5).
    func resumeRequest(as jid: JID) -> StreamNegotiationStateMachine.ResumeRequest? {
        guard let resumption = self.machine.resumption, jid.resourcepart != nil else { return nil }
        return StreamNegotiationStateMachine.ResumeRequest(previousID: resumption.id, handled: resumption.handled, jid: jid)
    }

    /// Feeds the server's answer to `<resume/>` to the SM machine; true when the stream
    /// continues the old session (its unacknowledged stanzas are sent again, in order).
    func applyResumeAnswer(on connection: XMPPConnection, in session: isolated XMPPSession<C>) async -> Bool {
        let restored = self.acknowledgements.restoredSession
        self.acknowledgements.restoredSession = false
        let pendingIDs = self.machine.pending.map { $0[attribute: "id"] ?? "" }
        var released: [String] = []
        // What the server counted before it lost the session (`<failed h>`) moves this on.
        var acknowledged = self.machine.acknowledged
        defer { self.publishSessionState(acknowledgedIDs: released, in: session) }
        guard let answer = connection.resumeAnswer, self.machine.resumeSent(), let actions = self.machine.received(answer) else {
            if self.machine.resumption != nil {
                // We had a session to resume but the server did not offer stream management.
                self.abandonResumption(in: session)
            }
            return false
        }
        let ledger = session.dependencies.configuration.ledger
        var resumed = false
        for action in actions {
            switch action {
            case .acknowledged(let through, let count):
                acknowledged = through
                released = Array(pendingIDs.prefix(count)).filter { !$0.isEmpty }
                ledger?.acknowledged(through: through)
                self.releaseWaiters(through: through, in: session)
                if restored, count > 0 {
                    // What the server took before the earlier process ended.
                    await session.emit(.resumedAfterRestart(handledIDs: Array(pendingIDs.prefix(count))))
                }
            case .resumed(let resend):
                resumed = true
                if let id = self.machine.resumption?.id { ledger?.begin(sessionID: id, acknowledged: self.machine.acknowledged) }
                // After a restart only ids are known: the owner sends what was not counted.
                // Messages the server did not count may still be routed by it: in doubt.
                let now = restored ? [] : session.archiveCheck.holdUncountedAtResume(resend, acknowledged: self.machine.acknowledged, in: session)
                session.dependencies.logger.info(
                    "stream resumed", metadata: ["resent": "\(now.count)", "in doubt": "\(restored ? 0 : resend.count - now.count)", "after restart": "\(restored)"]
                )
                // The `<r/>` proves the resumed stream is read (``AcknowledgementWatchdog``).
                self.acknowledgements.watchdog.resumed()
                try? await session.transmit(now + [self.machine.requestAck()], on: connection)
            case .resumeFailed(let condition, let unacknowledged):
                session.dependencies.logger.notice(
                    "stream resumption failed; a new session", metadata: ["condition": "\(condition)", "in doubt": "\(unacknowledged.count)"]
                )
                session.archiveCheck.giveUpResumption(pending: unacknowledged, acknowledged: acknowledged, restored: restored, in: session)
            case .enabled, .enableFailed, .protocolError:
                self.abandonResumption(in: session)
            }
        }
        return resumed
    }

    /// Stream management enabled inline by Bind 2 (XEP-0198 §"SASL2 and Bind2"): as if
    /// `<enable/>` had been sent before anything else on the stream, and its answer read.
    func applyInlineEnable(_ answer: XMLElement, on connection: XMPPConnection, in session: isolated XMPPSession<C>) async {
        _ = self.machine.enable(resume: true)
        guard let actions = self.machine.received(answer) else { return }
        await self.perform(actions, on: connection, in: session)
    }

    /// The old session is gone: its numbered stanzas' senders are told to try again.
    func abandonResumption(in session: isolated XMPPSession<C>) {
        self.end(in: session)
        for entry in self.acknowledgements.takeAll() { entry.waiter.complete(.failure(XMPPSessionError.disconnected)) }
        session.rooms.failUnreflected(XMPPSessionError.disconnected)
    }

    /// Carries out what the SM machine decided for an element in its namespace.
    func perform(_ actions: [StreamManagementStateMachine.Action], on connection: XMPPConnection, in session: isolated XMPPSession<C>) async {
        // The actions are carried out by a synchronous function: its locals are on the
        // thread's stack, not in an async frame a reading task allocates at every
        // burst (docs/performance.md).
        if self.apply(actions, in: session) { await connection.close(timeout: .zero) }
        await self.sendAcknowledgement(on: connection, in: session)
    }

    /// The synchronous part of ``perform(_:on:in:)``; returns whether the connection is
    /// to be closed (a protocol error).
    private func apply(_ actions: [StreamManagementStateMachine.Action], in session: isolated XMPPSession<C>) -> Bool {
        var closes = false
        let ledger = session.dependencies.configuration.ledger
        for action in actions {
            switch action {
            case .enabled(let id, _, let max):
                session.dependencies.logger.info("stream management enabled", metadata: ["resumable": "\(id != nil)", "max": "\(max.map(String.init) ?? "-")"])
                if let id { ledger?.begin(sessionID: id, acknowledged: 0) } else { ledger?.end() }
                self.publishSessionState(in: session)
            case .enableFailed(let condition):
                session.dependencies.logger.notice("stream management refused; deliveries wait on a ping's answer", metadata: ["condition": "\(condition)"])
                // No acknowledgement will come for what was numbered: its senders try again.
                self.abandonResumption(in: session)
            case .acknowledged(let through, _):
                ledger?.acknowledged(through: through)
                self.releaseWaiters(through: through, in: session)
                if self.acknowledgements.watchdog.unanswered > 0 { self.acknowledgements.watchdog.acknowledged(now: session.dependencies.clock.now) }
            case .resumed, .resumeFailed:
                // Resumption happens during negotiation, not on an established stream.
                session.dependencies.logger.warning("unexpected stream resumption answer ignored")
            case .protocolError(let reason):
                session.dependencies.logger.error("stream management protocol error from the server; closing", metadata: ["reason": "\(reason)"])
                closes = true
            }
        }
        return closes
    }

    /// Sends `<a h/>` if one is owed. The count goes to the ledger first: a session
    /// resumed after a restart must never report fewer handled stanzas than the server
    /// already heard (Prosody then closes the stream). Nothing is awaited between taking
    /// the acknowledgement and handing it to the channel, so they leave in increasing order.
    ///
    /// With an ``XMPPSessionConfiguration/acknowledgementDelay``, an answer that would
    /// report few new stanzas waits (one timer) unless `now`: the server asks once per
    /// answer, so a paced stream costs one `<r/>` and one `<a/>` per delay, not per stanza.
    func sendAcknowledgement(on connection: XMPPConnection, now: Bool = false, in session: isolated XMPPSession<C>) async {
        let delay = session.dependencies.configuration.acknowledgementDelay
        let batch = now || delay == .zero ? 0 : session.dependencies.configuration.acknowledgementBatch
        while let ack = self.machine.takeAck(deferringBelow: batch) {
            session.dependencies.configuration.ledger?.reported(handled: self.machine.handled)
            try? await connection.send([ack])
        }
        if !self.machine.acknowledgementOwed {
            session.current.timers.cancel(.acknowledgement)
        } else if session.current.timers.deadline(of: .acknowledgement) == nil {
            session.armTimer(.acknowledgement, at: session.dependencies.clock.now.advanced(by: delay))
        }
    }

    /// The consumer is done with these inbound messages; the server is told, once for all.
    func handled(_ numbers: [UInt32], in session: isolated XMPPSession<C>) async {
        for number in numbers { self.machine.handled(number) }
        guard let connection = session.current.connection else { return }
        await self.sendAcknowledgement(on: connection, in: session)
    }

    /// See ``XMPPSession/sendAcknowledged(_:written:)``.
    func sendAcknowledged(_ messages: [Message], written: @escaping @Sendable () -> Void, in session: isolated XMPPSession<C>) async throws {
        var signalled = false
        let signal = {
            if !signalled {
                signalled = true
                written()
            }
        }
        defer { signal() }
        // A stopping session takes nothing new: it could not be acknowledged before the close.
        guard !session.lifecycle.isStopping else { throw XMPPSessionError.stopped }
        // A connection being taken over takes new messages once it is reported online:
        // until then stream management may not be enabled (the message would go out
        // unnumbered) and what is sent again goes first.
        while session.current.connection != nil, !session.current.isOnline {
            try await Self.wait(for: session.current.untilOnline())
            guard !session.lifecycle.isStopping else { throw XMPPSessionError.stopped }
        }
        guard self.machine.isCounting, let connection = session.current.connection else {
            try await session.send(messages)
            signal()
            try await session.pingServer()
            return
        }
        var elements: [XMLElement] = []
        elements.reserveCapacity(messages.count + 1)
        for var message in messages {
            if message.id == nil { message.id = session.nextID() }
            elements.append(message.element)
        }
        let last = self.machine.sent &+ UInt32(truncatingIfNeeded: elements.count)
        let waiter = OneShotWaiter<Void>()
        self.acknowledgements.wait(
            AcknowledgementWaiter(number: last, waiter: waiter, sentAt: Date(), count: messages.count, room: session.rooms.roomSaidIn(elements), messages: elements)
        )
        // Whether a failed write leaves the batch to the resumption (read before the write:
        // the watchdog may give the session up while the write is pending).
        let resumable = self.machine.resumption != nil
        let requestNow = self.requestsAcknowledgementNow(unacknowledged: self.machine.pending.count + messages.count, in: session)
        if requestNow { elements.append(self.machine.requestAck()) }
        do {
            try await session.transmit(elements, on: connection)
        } catch where !resumable {
            waiter.complete(.failure(XMPPSessionError.writeFailed("\(error)")))
        } catch {
            // Numbered, so the server may have part of it: the connection's end settles it
            // (resumed, or in doubt and looked up in the archive), never a second send here.
        }
        if !requestNow { self.armAcknowledgementRequest(in: session) }
        signal()
        try await Self.wait(for: waiter)
    }

    private static func wait(for waiter: OneShotWaiter<Void>) async throws {
        try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.complete(.failure(XMPPSessionError.stopped))
        }
    }

    /// Whether a batch's `<r/>` goes with it (``AcknowledgementRequestPacer``); when it
    /// does, the timer for a later one is not needed.
    private func requestsAcknowledgementNow(unacknowledged: Int, in session: isolated XMPPSession<C>) -> Bool {
        let request = session.dependencies.configuration.acknowledgementRequests.batchCarriesRequest(unacknowledged: unacknowledged, waiting: self.acknowledgements.count)
        if request {
            session.current.timers.cancel(.acknowledgementRequest)
            self.acknowledgements.lastCarriedRequest = session.dependencies.clock.now
        }
        return request
    }

    /// One `<r/>` after the delay, for everything written until then (one timer).
    private func armAcknowledgementRequest(in session: isolated XMPPSession<C>) {
        guard session.current.timers.deadline(of: .acknowledgementRequest) == nil else { return }
        let now = session.dependencies.clock.now
        let delay = session.dependencies.configuration.acknowledgementRequests.timerDelay(
            sinceCarriedRequest: self.acknowledgements.lastCarriedRequest.map { $0.duration(to: now) }
        )
        session.armTimer(.acknowledgementRequest, at: now.advanced(by: delay))
    }

    func acknowledgementRequestDue(in session: isolated XMPPSession<C>) async {
        guard self.machine.isCounting, !self.machine.pending.isEmpty, let connection = session.current.connection else { return }
        try? await session.transmit([self.machine.requestAck()], on: connection)
    }

    /// See ``XMPPSession/waitForAcknowledgement()``.
    func waitForAcknowledgement(in session: isolated XMPPSession<C>) async throws {
        guard self.machine.isCounting, let connection = session.current.connection else {
            try await session.pingServer()
            return
        }
        let waiter = OneShotWaiter<Void>()
        self.acknowledgements.wait(AcknowledgementWaiter(number: self.machine.sent, waiter: waiter, sentAt: nil, count: 0))
        do {
            try await session.transmit([self.machine.requestAck()], on: connection)
        } catch {
            waiter.complete(.failure(XMPPSessionError.writeFailed("\(error)")))
        }
        try await Self.wait(for: waiter)
    }

    /// Before a clean close: waits, at most `stopAcknowledgementTimeout`, for the server to
    /// acknowledge what is still unacknowledged, so a batch in flight ends delivered instead of
    /// being sent again by whoever takes over the queue (a reload's new session).
    func settle(in session: isolated XMPPSession<C>) async {
        guard self.machine.isCounting, !self.acknowledgements.isEmpty else { return }
        let clock = session.dependencies.clock
        let deadline = clock.now.advanced(by: session.dependencies.configuration.stopAcknowledgementTimeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await session.waitForAcknowledgement() }
            group.addTask { _ = try? await clock.sleep(until: deadline, tolerance: nil) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Completes the waiters whose stanza number is covered by `through` (modulo 2³²).
    private func releaseWaiters(through: UInt32, in session: isolated XMPPSession<C>) {
        for entry in self.acknowledgements.covered(through: through) {
            if let room = entry.room {
                // Into a room: done once the room has reflected it too.
                session.rooms.parkUntilReflected(InDoubtMessages.Batch(messages: entry.messages, waiter: entry.waiter, room: room), sentAt: entry.sentAt, in: session)
            } else {
                entry.waiter.complete(.success(()))
            }
        }
    }

    /// Sends `batches` again in order with one `<r/>`, each sender acknowledged by the server's
    /// acknowledgement as any delivery is (XEP-0198 §4); on a stream that does not count,
    /// the senders are failed and send again themselves. Returns how many messages it took.
    @discardableResult
    func sendAgain(_ batches: [InDoubtMessages.Batch], on connection: XMPPConnection, in session: isolated XMPPSession<C>) async -> Int {
        var elements: [XMLElement] = []
        for batch in batches {
            elements += batch.messages
            if self.machine.isCounting {
                self.acknowledgements.wait(
                    AcknowledgementWaiter(
                        number: self.machine.sent &+ UInt32(truncatingIfNeeded: elements.count), waiter: batch.waiter, sentAt: Date(),
                        count: batch.messages.count, room: batch.room, messages: batch.messages
                    )
                )
            } else {
                batch.waiter.complete(.failure(XMPPSessionError.disconnected))
            }
        }
        if self.machine.isCounting, !elements.isEmpty {
            // A lost connection's end fails (or keeps, to resume) these waiters.
            try? await session.transmit(elements + [self.machine.requestAck()], on: connection)
        }
        return elements.count
    }
}
