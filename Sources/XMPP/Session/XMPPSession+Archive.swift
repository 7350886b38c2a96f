import Foundation

/// Message archive catch-up (XEP-0313) in the session: the ``ArchiveCatchUpStateMachine``
/// decides (its results read by ``InboundDispatch``); this runs its queries and hands
/// over what it holds.
extension XMPPSession {
    /// Hands a received message over, unless a catch-up is due or under way on this
    /// connection and it is live and in our archive: then it waits for the catch-up
    /// (``LiveMessageHold``). True when the consumer reports the message's stream number
    /// handled (``handled(_:)``); a held message's number is handled at once instead: it is
    /// in our archive and the cursor has not passed it, so if the connection or the process
    /// ends before it is handed over, the next catch-up reads it. (Keeping its number
    /// unhandled would hold the server's count back for the whole catch-up, whose results
    /// fill the server's resumption queue meanwhile.)
    func emitLive(_ message: Message, carbon: CarbonDirection?, on connection: XMPPConnection) async -> Bool {
        guard AccountCatchUp.waitsForCatchUp(message, carbon: carbon), let key = message.stanzaID else {
            await self.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        }
        var waiting = message
        waiting.streamNumber = nil
        switch self.catchUp.liveHold.offer(waiting, key: key) {
        case .held:
            return false
        case .passing:
            await self.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        case .overflow(let all):
            self.dependencies.logger.notice("too many live messages during the archive catch-up; handed over before it ends", metadata: ["held": "\(all.count)"])
            await self.handOver(all.dropLast(), on: connection)
            await self.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        }
    }

    /// The connection ended: what was held is dropped (``AccountCatchUp/connectionLost()``).
    func liveHoldConnectionLost() {
        let dropped = self.catchUp.connectionLost()
        guard dropped > 0 else { return }
        self.dependencies.logger.info("connection lost with live messages held for the archive catch-up; the next catch-up reads them", metadata: ["held": "\(dropped)"])
    }

    /// Hands held messages over in order, each with the cursor it now reaches (every one
    /// the catch-up also brought was dropped from the hold, so these are newer than its
    /// last result and the cursor only moves on).
    private func handOver(_ held: some Collection<Message>, on connection: XMPPConnection) async {
        for var message in held {
            message.archiveCursor = self.catchUp.machine?.liveMessage(stanzaID: message.stanzaID)
            await self.perform(.emitMessage(message, carbon: nil), on: connection)
        }
    }

    /// Runs a catch-up when a gap is open: queries page by page (the results arrive as
    /// messages through the read loop, in order), hands over what arrived live meanwhile,
    /// then reports where the cursor stands.
    func catchUpFromArchive() async {
        let connection = self.current.connection
        let cursor = await self.readArchive()
        if let cursor { await self.emit(.archiveCursorMoved(cursor)) }
        // Held live messages are newer than every archived one: after them, each moving the
        // cursor on as it is handed over. Batch by batch, until a take finds none and so
        // ends the hold: one read meanwhile waits behind the batch being handed over. A
        // connection lost meanwhile dropped them (its successor's hold is its own).
        while let current = connection, self.current.connection === current {
            let batch = self.catchUp.liveHold.takeForHandOver()
            if batch.isEmpty { return }
            await self.handOver(batch, on: current)
        }
    }

    /// Queries the archive page by page; the cursor to report, when the catch-up got to
    /// the end.
    private func readArchive() async -> ArchiveCursor? {
        guard var action = self.catchUp.machine?.start(now: Date(), queryID: self.nextID()) else { return nil }
        while true {
            switch action {
            case .query(let query):
                let next: ArchiveCatchUpStateMachine.Action?
                do {
                    let answer = try await self.request(query)
                    next = self.catchUp.machine?.answered(answer, now: Date(), nextQueryID: self.nextID())
                } catch XMPPSessionError.stanzaError(let error) {
                    next = self.catchUp.machine?.failed(error.condition, now: Date(), nextQueryID: self.nextID())
                } catch {
                    next = self.catchUp.machine?.failed(nil, now: Date(), nextQueryID: self.nextID())
                }
                guard let next else { return nil }
                action = next
            case .caughtUp(let cursor, let emitted, let pages):
                self.dependencies.logger.info(
                    "caught up from the message archive",
                    metadata: ["archived messages": "\(emitted)", "pages": "\(pages)", "cursor": "\(cursor.map { "\($0)" } ?? "-")", "held live": "\(self.catchUp.liveHold.heldCount)", "held and archived": "\(self.catchUp.liveHold.archivedCount)"]
                )
                return cursor
            case .gaveUp(let reason):
                self.dependencies.logger.warning("message archive catch-up stopped; tried again after the next reconnect", metadata: ["reason": "\(reason)"])
                return nil
            case .unavailable(let reason):
                self.dependencies.logger.notice("no catch-up from a message archive", metadata: ["reason": "\(reason)"])
                return nil
            }
        }
    }
}
