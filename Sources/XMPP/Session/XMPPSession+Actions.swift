extension XMPPSession {
    /// What the session does with `element` (``InboundDispatch``): a room's part is carried
    /// out by ``SessionRooms``, the rest returned for the session to perform.
    func stanzaActions(for element: XMLElement) async -> [SessionStateMachine<C.Instant>.Action] {
        let outcome = InboundDispatch<C.Instant>.read(
            element, inDoubt: &self.archiveCheck.inDoubt, rooms: &self.rooms.table, catchUp: &self.catchUp.state, machine: &self.machine,
            now: { self.dependencies.clock.now }
        )
        switch outcome {
        case .taken: return []
        case .session(let actions): return actions
        case .room(let room, let inbound): return await self.rooms.read(inbound, room: room, in: self)
        }
    }

    /// Carries out what ``SessionStateMachine`` decided for one inbound stanza.
    /// Not inlined into the read loop: its locals live in its own frame, popped after each
    /// action, not in the long-lived loop's (one per account).
    @inline(never)
    func perform(_ action: SessionStateMachine<C.Instant>.Action, on connection: XMPPConnection) async {
        // The event is built first and emitted by one await.
        let event: XMPPSessionEvent
        switch action {
        case .send(let element):
            try? await self.transmit([element], on: connection)
            return
        case .completeRequest(let id, let iq):
            self.current.requests.answer(id, with: iq)
            return
        case .emitMessage(let message, let carbon):
            event = .message(message, carbon: carbon)
        case .presenceChanged(let presence, let best):
            event = .presence(presence, best: best)
        case .subscriptionRequested(let from, let presence):
            event = .subscriptionRequest(from: from, presence)
        case .subscriptionChanged(let presence):
            event = .subscriptionChanged(presence)
        case .rosterChanged(let outcome):
            event = .rosterChanged(outcome)
        case .copyStanzaID(let room, let id, let stanzaID):
            event = .copyStanzaID(room: room, id: id, stanzaID: stanzaID)
        case .ignored(let reason):
            // Spoofed replies, forged carbons and strangers' roster pushes land here.
            self.ignoredStanzas.log(reason, now: self.dependencies.clock.now, to: self.dependencies.logger)
            return
        }
        await self.emit(event)
    }
}
