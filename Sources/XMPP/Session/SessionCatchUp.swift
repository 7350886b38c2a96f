import Foundation

/// Catching up from the account's own archive (XEP-0313 §4) in a session: the
/// ``AccountCatchUp`` decides (its results read by ``InboundDispatch``); this runs its
/// queries and hands over the live messages held meanwhile (``LiveMessageHold``).
///
/// Owned by its session and run on it (each method takes the session `isolated`).
final class SessionCatchUp<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    var state: AccountCatchUp

    init(_ configuration: XMPPSessionConfiguration<C>) {
        self.state = AccountCatchUp(
            machine: configuration.catchUp.map {
                ArchiveCatchUpStateMachine(ownJID: configuration.client.jid, cursor: configuration.archiveCursor, configuration: $0)
            },
            holdLimit: configuration.catchUp?.maximumHeldLiveMessages ?? 1
        )
    }

    /// Hands a received message over, unless a catch-up is due or under way on this
    /// connection and it is live and in our archive: then it waits for the catch-up
    /// (``LiveMessageHold``). True when the consumer reports the message's stream number
    /// handled (``XMPPSession/handled(_:)``); a held message's number is handled at once
    /// instead: it is in our archive and the cursor has not passed it, so if the connection
    /// or the process ends before it is handed over, the next catch-up reads it. (Keeping
    /// its number unhandled would hold the server's count back for the whole catch-up, whose
    /// results fill the server's resumption queue meanwhile.)
    func emitLive(_ message: Message, carbon: CarbonDirection?, on connection: XMPPConnection, in session: isolated XMPPSession<C>) async -> Bool {
        guard AccountCatchUp.waitsForCatchUp(message, carbon: carbon), let key = message.stanzaID else {
            await session.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        }
        var waiting = message
        waiting.streamNumber = nil
        switch self.state.liveHold.offer(waiting, key: key) {
        case .held:
            return false
        case .passing:
            await session.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        case .overflow(let all):
            session.dependencies.logger.notice("too many live messages during the archive catch-up; handed over before it ends", metadata: ["held": "\(all.count)"])
            await self.handOver(all.dropLast(), on: connection, in: session)
            await session.perform(.emitMessage(message, carbon: carbon), on: connection)
            return message.streamNumber != nil
        }
    }

    /// The connection ended: what was held is dropped (``AccountCatchUp/connectionLost()``).
    func connectionLost(in session: isolated XMPPSession<C>) {
        let dropped = self.state.connectionLost()
        guard dropped > 0 else { return }
        session.dependencies.logger.info("connection lost with live messages held for the archive catch-up; the next catch-up reads them", metadata: ["held": "\(dropped)"])
    }

    /// Hands held messages over in order, each with the cursor it now reaches (every one
    /// the catch-up also brought was dropped from the hold, so these are newer than its
    /// last result and the cursor only moves on).
    private func handOver(_ held: some Collection<Message>, on connection: XMPPConnection, in session: isolated XMPPSession<C>) async {
        for var message in held {
            message.archiveCursor = self.state.machine?.liveMessage(stanzaID: message.stanzaID)
            await session.perform(.emitMessage(message, carbon: nil), on: connection)
        }
    }

    /// Runs a catch-up when a gap is open: queries page by page (the results arrive as
    /// messages through reading, in order), hands over what arrived live meanwhile,
    /// then reports where the cursor stands.
    func run(in session: isolated XMPPSession<C>) async {
        let connection = session.current.connection
        let cursor = await self.readArchive(in: session)
        if let cursor { await session.emit(.archiveCursorMoved(cursor)) }
        // Held live messages are newer than every archived one: after them, each moving the
        // cursor on as it is handed over. Batch by batch, until a take finds none and so
        // ends the hold: one read meanwhile waits behind the batch being handed over. A
        // connection lost meanwhile dropped them (its successor's hold is its own).
        while let current = connection, session.current.connection === current {
            let batch = self.state.liveHold.takeForHandOver()
            if batch.isEmpty { return }
            await self.handOver(batch, on: current, in: session)
        }
    }

    /// Queries the archive page by page; the cursor to report, when the catch-up got to
    /// the end.
    private func readArchive(in session: isolated XMPPSession<C>) async -> ArchiveCursor? {
        guard var action = self.state.machine?.start(now: Date(), queryID: session.nextID()) else { return nil }
        let logger = session.dependencies.logger
        while true {
            switch action {
            case .query(let query):
                let next: ArchiveCatchUpStateMachine.Action?
                do {
                    let answer = try await session.request(query)
                    next = self.state.machine?.answered(answer, now: Date(), nextQueryID: session.nextID())
                } catch XMPPSessionError.stanzaError(let error) {
                    next = self.state.machine?.failed(error.condition, now: Date(), nextQueryID: session.nextID())
                } catch {
                    next = self.state.machine?.failed(nil, now: Date(), nextQueryID: session.nextID())
                }
                guard let next else { return nil }
                action = next
            case .caughtUp(let cursor, let emitted, let pages):
                logger.info(
                    "caught up from the message archive",
                    metadata: [
                        "archived messages": "\(emitted)", "pages": "\(pages)", "cursor": "\(cursor.map { "\($0)" } ?? "-")",
                        "held live": "\(self.state.liveHold.heldCount)", "held and archived": "\(self.state.liveHold.archivedCount)",
                    ]
                )
                return cursor
            case .gaveUp(let reason):
                logger.warning("message archive catch-up stopped; tried again after the next reconnect", metadata: ["reason": "\(reason)"])
                return nil
            case .unavailable(let reason):
                logger.notice("no catch-up from a message archive", metadata: ["reason": "\(reason)"])
                return nil
            }
        }
    }
}
