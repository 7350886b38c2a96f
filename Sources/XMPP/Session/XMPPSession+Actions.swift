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
    ///
    /// Not inlined into reading, and the action taken apart by a synchronous
    /// function: an async frame keeps a slot for every value any case binds (a message, a
    /// presence, ...), and a reading task allocates the largest frames it runs at every
    /// burst; a synchronous function's are on the thread's stack (docs/performance.md).
    @inline(never)
    func perform(_ action: SessionStateMachine<C.Instant>.Action, on connection: XMPPConnection) async {
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
    private enum AsyncPart {
        /// A stanza to write.
        case send(XMLElement)
        /// An event for the session's consumer.
        case emit(XMPPSessionEvent)
    }

    /// Does the synchronous part of `action`; returns what is left to await, if anything.
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
