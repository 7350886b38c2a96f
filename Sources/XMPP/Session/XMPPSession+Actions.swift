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
        // The action is taken apart by a synchronous function: an async frame keeps a slot
        // for every value any case binds (a message, a presence, ...), and the read loop's
        // task keeps its largest frames for the connection's life; a synchronous
        // function's are on the thread's stack (docs/performance.md).
        switch self.asyncPart(of: action) {
        case nil:
            return
        case .send(let element):
            try? await self.transmit([element], on: connection)
        case .emit(let event):
            await self.emit(event)
        }
    }

    /// What of an action must suspend, once its synchronous part is done.
    enum AsyncPart {
        case send(XMLElement)
        case emit(XMPPSessionEvent)
    }

    private func asyncPart(of action: SessionStateMachine<C.Instant>.Action) -> AsyncPart? {
        switch action {
        case .send(let element):
            return .send(element)
        case .completeRequest(let id, let iq):
            self.current.requests.answer(id, with: iq)
            return nil
        case .emitMessage(let message, let carbon):
            return .emit(.message(message, carbon: carbon))
        case .presenceChanged(let presence, let best):
            return .emit(.presence(presence, best: best))
        case .subscriptionRequested(let from, let presence):
            return .emit(.subscriptionRequest(from: from, presence))
        case .subscriptionChanged(let presence):
            return .emit(.subscriptionChanged(presence))
        case .rosterChanged(let outcome):
            return .emit(.rosterChanged(outcome))
        case .copyStanzaID(let room, let id, let stanzaID):
            return .emit(.copyStanzaID(room: room, id: id, stanzaID: stanzaID))
        case .ignored(let reason):
            // Spoofed replies, forged carbons and strangers' roster pushes land here.
            self.ignoredStanzas.log(reason, now: self.dependencies.clock.now, to: self.dependencies.logger)
            return nil
        }
    }
}
