import Foundation

/// Message archive catch-up (XEP-0313) in the session: the ``ArchiveCatchUpStateMachine``
/// decides; this runs its queries and tags messages with their archive ids and cursors.
extension XMPPSession {
    /// What a received stanza means: archive results are read by the archive machine,
    /// everything else by the session machine; live messages get their archive id
    /// (XEP-0359 `stanza-id` by our own account) and, when it moves, the archive cursor.
    func actions(for element: XMLElement) -> [SessionStateMachine<C.Instant>.Action] {
        if element.name == "message", self.runningArchiveCheck?.received(element) == true { return [] }
        if element.name == "message", self.archive != nil {
            switch self.archive?.received(element) {
            case .archived(var message, let cursor):
                if case .after(let id) = cursor { message.archiveID = id }
                message.archiveCursor = cursor
                return [.emitMessage(message, carbon: nil)]
            case .skipped:
                return []
            case .forged(let reason):
                return [.ignored(reason)]
            case .notAResult, nil:
                break
            }
        }
        var actions = self.machine.received(element)
        for index in actions.indices {
            guard case .emitMessage(var message, nil) = actions[index] else { continue }
            message.archiveID = ArchiveCatchUpStateMachine.stanzaID(of: message, ownJID: self.machine.ownJID)
            message.archiveCursor = self.archive?.liveMessage(archiveID: message.archiveID)
            actions[index] = .emitMessage(message, carbon: nil)
        }
        return actions
    }

    /// Runs a catch-up when a gap is open: queries page by page (the results arrive as
    /// messages through the read loop, in order), then reports where the cursor stands.
    func catchUpFromArchive() async {
        guard var action = self.archive?.start(now: Date(), queryID: self.nextID()) else { return }
        while true {
            switch action {
            case .query(let query):
                let next: ArchiveCatchUpStateMachine.Action?
                do {
                    let answer = try await self.request(query)
                    next = self.archive?.answered(answer, now: Date(), nextQueryID: self.nextID())
                } catch XMPPSessionError.stanzaError(let error) {
                    next = self.archive?.failed(error.condition, now: Date(), nextQueryID: self.nextID())
                } catch {
                    next = self.archive?.failed(nil, now: Date(), nextQueryID: self.nextID())
                }
                guard let next else { return }
                action = next
            case .caughtUp(let cursor, let relayed, let pages):
                self.logger.info("caught up from the message archive", metadata: ["archived messages": "\(relayed)", "pages": "\(pages)", "cursor": "\(cursor.map { "\($0)" } ?? "-")"])
                if let cursor { await self.emit(.archiveCursorMoved(cursor)) }
                return
            case .gaveUp(let reason):
                self.logger.warning("message archive catch-up stopped; tried again after the next reconnect", metadata: ["reason": "\(reason)"])
                return
            case .unavailable(let reason):
                self.logger.notice("no catch-up from a message archive", metadata: ["reason": "\(reason)"])
                return
            }
        }
    }
}
