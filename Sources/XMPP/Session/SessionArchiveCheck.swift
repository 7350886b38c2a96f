import Foundation
import Logging

/// In-doubt messages (``InDoubtMessages``) in a session: kept when the server loses a
/// session with them unacknowledged (XEP-0198 §5), looked up in the account's archive and
/// the rooms' (XEP-0313, ``ArchiveCheckStateMachine``) on the next stream before it reports
/// online, and sent again only where the archive does not have them.
///
/// Owned by its session and run on it (each method takes the session `isolated`).
final class SessionArchiveCheck<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// Lost streams: the messages in doubt after them, when, and their archive checks.
    var inDoubt = InDoubtState<C.Instant>()
    /// The server's software, once asked (nil inside: it did not say). Kept while streams
    /// resume, which only the same server process can do, so a resumption with messages in
    /// doubt does not ask again; forgotten when a new session starts (the server may have
    /// restarted, perhaps upgraded).
    var software: String??

    /// What an earlier owner of the account may have sent (``XMPPSessionConfiguration/priorSession``)
    /// is in doubt, lost at the latest when it last held the account (so a server restart
    /// since is never missed); nothing when there is nothing, or no archive check.
    init(_ configuration: XMPPSessionConfiguration<C>, now: C.Instant) {
        guard let inherited = configuration.priorSession, !inherited.messageIDs.isEmpty, configuration.archiveCheck != nil else { return }
        var doubt = InDoubtMessages()
        doubt.restoredIDs = inherited.messageIDs
        doubt.sentSince = inherited.since
        doubt.sessionID = inherited.session?.id
        self.inDoubt.messages.merge(doubt)
        self.inDoubt.since = now.advanced(by: .zero - max(.zero, inherited.lostFor))
    }

    /// The stream management session is gone (resumption failed, or a resumed stream was
    /// not read): what the server had not acknowledged becomes in doubt, its senders keep
    /// waiting, and the session starts afresh. `pending` are the unacknowledged stanzas,
    /// numbered from `acknowledged + 1`; `restored`: they are ids from an earlier process.
    func giveUpResumption(pending: [XMLElement]? = nil, acknowledged: UInt32? = nil, restored: Bool = false, in session: isolated XMPPSession<C>) {
        let streamManagement = session.streamManagement
        let pending = pending ?? streamManagement.machine.pending
        var doubt = InDoubtMessages()
        if restored {
            doubt.restoredIDs = pending.compactMap { $0[attribute: "id"] }.filter { !$0.isEmpty }
        } else {
            let (split, unsettled) = InDoubtMessages.split(
                pending: pending, acknowledged: acknowledged ?? streamManagement.machine.acknowledged, waiters: streamManagement.acknowledgements.waiters
            )
            // Said in a room and acknowledged, but not reflected yet: in doubt as well (the
            // server may have acknowledged them before the room took them), and older; older
            // still what we left a room with unreflected.
            doubt = session.rooms.table.takeLeftUnreflected()
            doubt.merge(session.rooms.table.unreflected.takeAll())
            doubt.merge(split)
            doubt.serverEndedStream = self.inDoubt.lastLossEndedByServer
            for waiter in unsettled { waiter.complete(.failure(XMPPSessionError.disconnected)) }
        }
        _ = streamManagement.acknowledgements.takeAll()
        // The server's session held our room memberships: they went with it, so deliveries
        // into rooms wait for the rejoin (and what is in doubt there goes first).
        session.rooms.connectionLost(resumable: false, in: session)
        if session.dependencies.configuration.archiveCheck == nil {
            // No archive to ask: the senders try again (at least once).
            for batch in doubt.batches { batch.waiter.complete(.failure(XMPPSessionError.disconnected)) }
        } else {
            self.inDoubt.add(doubt)
        }
        streamManagement.abandonResumption(in: session)
    }

    /// Looks the in-doubt messages up, settles their senders and sends again what is not
    /// there, in order, before anything new: messages to contacts in the account's archive,
    /// messages said in a room as reflected by it or in the room's archive (those go again
    /// once the room is joined, ahead of anything new to it). Without an answer from an
    /// archive everything in doubt there is sent again (at least once) and counted in the log.
    /// `resumed`: this stream resumed the last session (XEP-0198 §5); when that is the
    /// session the doubt was written on (an earlier owner's, inherited), the server kept it
    /// through the loss, so it has not restarted since.
    func checkInDoubt(on connection: XMPPConnection, resumed: Bool, in session: isolated XMPPSession<C>) async {
        guard !self.inDoubt.messages.isEmpty, let limits = session.dependencies.configuration.archiveCheck else { return }
        let doubt = self.inDoubt.take()
        if doubt.uncountedAtResume {
            let software = await self.serverSoftware(timeout: session.dependencies.configuration.requestTimeout, in: session)
            guard !ArchiveCheckStateMachine.handlesOneStanzaAtATime(software: software) else {
                // The server's count is exact: what it did not count it did not take.
                let resent = await session.streamManagement.sendAgain(doubt.batches, on: connection, in: session)
                self.inDoubt.settledAll()
                session.dependencies.logger.debug("uncounted messages sent again", metadata: ["count": "\(resent)", "server": "\(software ?? "-")"])
                return
            }
            // Its old session routes what it read last right after answering the resume.
            try? await session.dependencies.clock.sleep(for: limits.uncountedSettleDelay)
        }
        await self.check(doubt, on: connection, resumed: resumed, in: session)
    }

    /// The server resumed the session (XEP-0198 §5) with an `h` short of what was written.
    /// The senders' batches among `resend` (numbered from `acknowledged + 1`) are put in
    /// doubt, settled before the stream reports online (``checkInDoubt(on:resumed:in:)``);
    /// returned are the stanzas to send again at once: those no batch holds (receipts,
    /// requests), or all of them when nothing is put in doubt: without an archive to ask,
    /// with doubt already kept, when a waiter cannot be settled by the archive (a plain
    /// wait, a batch that mixes targets), or a batch was said in a room (its reflection
    /// settles it, XEP-0045 §7.2.2).
    func holdUncountedAtResume(_ resend: [XMLElement], acknowledged: UInt32, in session: isolated XMPPSession<C>) -> [XMLElement] {
        guard let limits = session.dependencies.configuration.archiveCheck, limits.uncountedSettleDelay > .zero, !resend.isEmpty,
            self.inDoubt.messages.isEmpty
        else { return resend }
        let streamManagement = session.streamManagement
        var (doubt, unsettled) = InDoubtMessages.split(pending: resend, acknowledged: acknowledged, waiters: streamManagement.acknowledgements.waiters)
        guard unsettled.isEmpty, !doubt.batches.isEmpty, doubt.batches.allSatisfy({ $0.room == nil }) else { return resend }
        _ = streamManagement.acknowledgements.takeAll()
        doubt.uncountedAtResume = true
        doubt.sessionID = streamManagement.machine.resumption?.id
        self.inDoubt.add(doubt)
        let held = doubt.ids
        return resend.filter { element in element[attribute: "id"].map { !held.contains($0) } ?? true }
    }

    /// Looks up in the room's archive (XEP-0313 on the room's JID) what we left `room` with
    /// unreflected (``RoomTable/Entry/leftUnreflected``, XEP-0045 §7.2.2), now that we are
    /// back in it: what is not there is said again first.
    func checkLeftUnreflected(room: JID, in session: isolated XMPPSession<C>) async {
        guard let doubt = session.rooms.table.entries[room]?.leftUnreflected, !doubt.isEmpty, let connection = session.current.connection else { return }
        session.rooms.table.entries[room]?.leftUnreflected = InDoubtMessages()
        await self.check(doubt, on: connection, resumed: false, in: session)
    }

    /// The check itself: each archive asked in turn (XEP-0313 §4), the senders settled, the
    /// rest sent again.
    private func check(_ doubt: InDoubtMessages, on connection: XMPPConnection, resumed: Bool, in session: isolated XMPPSession<C>) async {
        guard let limits = session.dependencies.configuration.archiveCheck else { return }
        let rooms = session.rooms
        let started = session.dependencies.clock.now
        // What a room reflected reached it (XEP-0045 §7.2.2): no need to look.
        var archived = Set(doubt.batches.flatMap { batch -> [String] in
            guard let room = batch.room, let machine = rooms.table.entries[room]?.machine else { return [] }
            return batch.messages.compactMap { $0[attribute: "id"] }.filter(machine.reflected)
        })
        let reflected = archived.count
        var found = 0
        var pages = 0
        var endings: [String] = []
        var unreadable = false
        var checks: [ArchiveCheckStateMachine] = []
        let archives = doubt.idsByArchive.sorted { ($0.key?.description ?? "") < ($1.key?.description ?? "") }
        // A room taken out meanwhile is not asked: its batches go back to their senders.
        for (room, ids) in archives where !ids.subtracting(archived).isEmpty && (room == nil || rooms.table.entries[room!] != nil) {
            let check = ArchiveCheckStateMachine(
                archive: room ?? session.machine.ownJID, room: room != nil, inDoubt: ids.subtracting(archived), sentSince: doubt.sentSince, configuration: limits
            )
            guard let (finished, action) = await self.run(check, on: connection, in: session) else {
                // The connection went while asking: the next stream asks again (these first);
                // a stopping session has no next stream, so their senders decide.
                guard !session.lifecycle.isStopping else {
                    for batch in doubt.batches { batch.waiter.complete(.failure(XMPPSessionError.stopped)) }
                    return
                }
                self.inDoubt.putBack(doubt)
                return
            }
            guard case .finished(let inThisArchive, let queries, let ending) = action else { continue }
            archived.formUnion(inThisArchive)
            found += inThisArchive.count
            pages += queries
            endings.append(room.map { "\($0): \(ending)" } ?? "\(ending)")
            if case .archiveUnreadable = ending { unreadable = true }
            checks.append(finished)
        }
        let (restarted, uncertain) = await self.discountUncertain(&archived, doubt: doubt, checks: checks, found: found, resumed: resumed, in: session)
        let (settled, batches) = doubt.settle(archived: archived)
        for waiter in settled { waiter.complete(.success(())) }
        var toContacts: [InDoubtMessages.Batch] = []
        var inRooms = 0
        for batch in batches {
            guard let room = batch.room else {
                toContacts.append(batch)
                continue
            }
            if rooms.table.entries[room] != nil {
                // Said again once the room is joined (this stream's join is still to come).
                rooms.table.entries[room]?.resend.append(batch)
                inRooms += batch.messages.count
            } else {
                // The room was taken out meanwhile: its sender decides.
                batch.waiter.complete(.failure(XMPPSessionError.disconnected))
            }
        }
        let resent = await session.streamManagement.sendAgain(toContacts, on: connection, in: session)
        self.inDoubt.settledAll()
        let restoredArchived = doubt.restoredIDs.filter { archived.contains($0) }
        if !restoredArchived.isEmpty { await session.emit(.resumedAfterRestart(handledIDs: restoredArchived)) }
        let elapsed = started.duration(to: session.dependencies.clock.now)
        let metadata: Logger.Metadata = [
            "in doubt": "\(doubt.ids.count)", "found": "\(found)", "reflected": "\(reflected)",
            "sent again": "\(resent + inRooms + doubt.restoredIDs.count - restoredArchived.count)",
            "queries": "\(pages)", "server restarted": "\(restarted)", "uncertain": "\(uncertain)",
            "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
            "outcome": "\(endings.isEmpty ? "all reflected" : endings.joined(separator: "; "))",
        ]
        if unreadable {
            session.dependencies.logger.warning("the archive could not be read; in-doubt messages sent again (at least once)", metadata: metadata)
        } else {
            session.dependencies.logger.info("in-doubt messages checked against the archive", metadata: metadata)
        }
    }

    /// A server that crashed may have archived messages for us and never routed them:
    /// unless it ended the stream itself (alive, done with each) or says it has not
    /// restarted since, those are taken out of `archived` and go again (at least once).
    /// Returns what was learnt of a restart (for the log) and how many were taken out.
    private func discountUncertain(
        _ archived: inout Set<String>, doubt: InDoubtMessages, checks: [ArchiveCheckStateMachine], found: Int, resumed: Bool, in session: isolated XMPPSession<C>
    ) async -> (restarted: String, uncertain: Int) {
        if doubt.serverEndedStream { return ("no (it ended the stream)", 0) }
        if resumed, let written = doubt.sessionID, written == session.streamManagement.machine.resumption?.id { return ("no (the session was resumed)", 0) }
        guard found > 0, checks.contains(where: { !$0.isRoom && !$0.archived.isEmpty }) else { return ("not asked", 0) }
        let timeout = session.dependencies.configuration.requestTimeout
        let answer = await self.serverRestartedSinceLoss(timeout: timeout, in: session)
        guard answer != false else { return ("false", 0) }
        let software = await self.serverSoftware(timeout: timeout, in: session)
        var uncertain = 0
        for check in checks {
            let doubtful = check.uncertain(serverRestarted: answer, oneStanzaAtATime: ArchiveCheckStateMachine.handlesOneStanzaAtATime(software: software))
            uncertain += doubtful.count
            archived.subtract(doubtful)
        }
        return (answer.map { "\($0)" } ?? "unknown", uncertain)
    }
}
