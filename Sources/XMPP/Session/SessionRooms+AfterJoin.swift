import Foundation

/// The work after a room is joined: what we left it with unreflected is looked up, what was
/// in doubt there said again, its features asked (XEP-0030) and its archive read (XEP-0313).
extension SessionRooms {
    /// Starts the work after a join (the room's features, then the archive catch-up) beside
    /// reading, replacing any still running for this room.
    func startAfterJoin(_ room: JID, in session: isolated XMPPSession<C>) {
        let job = session.nextID()
        self.table.entries[room]?.afterJoin = job
        session.spawn { session in await session.rooms.afterJoin(room, job: job, in: session) }
    }

    /// Asks the room what it supports (XEP-0030): `stanza-id`s are trusted only from a room
    /// that says it gives them (XEP-0359 §6), and its archive is read only if it has one.
    private func afterJoin(_ room: JID, job: String, in session: isolated XMPPSession<C>) async {
        if self.table.entries[room]?.checkingLeftUnreflected == true {
            await session.archiveCheck.checkLeftUnreflected(room: room, in: session)
            // Replaced by a later join's (or ended with the connection): that one decides.
            guard self.table.entries[room]?.afterJoin == job else { return }
            // Said again only into the room we are in (a second kick meanwhile keeps them for
            // the next join); the gate opens either way, so it never stays shut.
            if self.table.entries[room]?.machine.isJoined == true { await self.resendAfterJoin(room, in: session) }
            self.table.entries[room]?.checkingLeftUnreflected = false
            await self.emitStatus(room, in: session)
        }
        var features: Set<String>?
        let disco = IQ(type: .get, id: session.nextID(), to: room, payload: XMLElement(name: "query", namespace: EntityCapabilities.discoInfoNamespace))
        if let info = try? await session.request(disco) {
            features = Set(info.payload?.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] } ?? [])
        }
        guard !Task.isCancelled, self.table.entries[room]?.afterJoin == job else { return }
        if let features {
            self.table.entries[room]?.trustsStanzaIDs = features.contains(ArchiveCatchUpStateMachine.stanzaIDNamespace)
            if !features.contains(ArchiveCatchUpStateMachine.namespace), self.table.entries[room]?.archive != nil {
                session.dependencies.logger.notice("the room keeps no archive: messages missed while out of it are not caught up", metadata: ["room": "\(room)"])
                return
            }
        }
        await self.catchUp(room, in: session)
    }

    /// Reads the room's archive after the stored cursor (XEP-0313 §5), page by page; the
    /// results arrive through reading, in order. Answers for a query that is no longer
    /// the room's current one (a rejoin started another) are dropped.
    private func catchUp(_ room: JID, in session: isolated XMPPSession<C>) async {
        guard var action = self.table.entries[room]?.archive?.start(now: Date(), queryID: session.nextID()) else { return }
        let logger = session.dependencies.logger
        while true {
            switch action {
            case .query(var query):
                query.to = room
                let next: ArchiveCatchUpStateMachine.Action?
                let result: Result<IQ, any Error>
                do {
                    result = .success(try await session.request(query))
                } catch {
                    result = .failure(error)
                }
                guard !Task.isCancelled, self.table.entries[room]?.archive?.currentQueryID == query.id else { return }
                switch result {
                case .success(let answer):
                    next = self.table.entries[room]?.archive?.answered(answer, now: Date(), nextQueryID: session.nextID())
                case .failure(XMPPSessionError.stanzaError(let error)):
                    next = self.table.entries[room]?.archive?.failed(error.condition, now: Date(), nextQueryID: session.nextID())
                case .failure:
                    next = self.table.entries[room]?.archive?.failed(nil, now: Date(), nextQueryID: session.nextID())
                }
                guard let next else { return }
                action = next
            case .caughtUp(let cursor, let emitted, let pages):
                logger.info("caught up from the room's archive", metadata: ["room": "\(room)", "archived messages": "\(emitted)", "pages": "\(pages)"])
                if let cursor { await session.emit(.roomCursorMoved(room: room, cursor)) }
                return
            case .gaveUp(let reason):
                logger.warning("room archive catch-up stopped; tried again after the next join", metadata: ["room": "\(room)", "reason": "\(reason)"])
                return
            case .unavailable(let reason):
                logger.notice("the room keeps no archive: messages missed while out of it are not caught up", metadata: ["room": "\(room)", "reason": "\(reason)"])
                return
            }
        }
    }

    /// Says again, first thing after `room` is joined, what was in doubt there and not found
    /// (``SessionArchiveCheck``), each batch acknowledged as any delivery is.
    func resendAfterJoin(_ room: JID, in session: isolated XMPPSession<C>) async {
        guard let batches = self.table.entries[room]?.resend, !batches.isEmpty, let connection = session.current.connection else { return }
        self.table.entries[room]?.resend = []
        for message in batches.flatMap(\.messages) {
            if let id = message[attribute: "id"] { self.table.entries[room]?.machine.sending(id: id) }
        }
        if session.streamManagement.machine.isCounting {
            session.dependencies.logger.info("in-doubt messages said again in the room", metadata: ["room": "\(room)", "messages": "\(batches.reduce(0) { $0 + $1.messages.count })"])
        }
        await session.streamManagement.sendAgain(batches, on: connection, in: session)
    }
}
