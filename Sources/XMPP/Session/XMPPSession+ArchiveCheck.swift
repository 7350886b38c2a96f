import Foundation
import Logging

/// In-doubt messages (``InDoubtMessages``) in the session: kept when the server loses a
/// session with them unacknowledged (XEP-0198 §5), looked up in the account's archive
/// (XEP-0313) on the next stream before it reports online, and sent again only where the
/// archive does not have them.
extension XMPPSession {
    /// The stream management session is gone (resumption failed, or a resumed stream was
    /// not read): what the server had not acknowledged becomes in doubt, its senders keep
    /// waiting, and the session starts afresh. `pending` are the unacknowledged stanzas,
    /// numbered from `acknowledged + 1`; `restored`: they are ids from an earlier process.
    func giveUpResumption(pending: [XMLElement]? = nil, acknowledged: UInt32? = nil, restored: Bool = false) {
        let pending = pending ?? self.streamManagement.pending
        var doubt = InDoubtMessages()
        if restored {
            doubt.restoredIDs = pending.compactMap { $0[attribute: "id"] }.filter { !$0.isEmpty }
        } else {
            let (split, unsettled) = InDoubtMessages.split(
                pending: pending, acknowledged: acknowledged ?? self.streamManagement.acknowledged, waiters: self.acknowledgements.waiters
            )
            // Said in a room and acknowledged, but not reflected yet: in doubt as well (the
            // server may have acknowledged them before the room took them), and older; older
            // still what we left a room with unreflected.
            doubt = self.rooms.takeLeftUnreflected()
            doubt.merge(self.rooms.unreflected.takeAll())
            doubt.merge(split)
            doubt.serverEndedStream = self.inDoubt.lastLossEndedByServer
            for waiter in unsettled { waiter.complete(.failure(XMPPSessionError.disconnected)) }
        }
        _ = self.acknowledgements.takeAll()
        // The server's session held our room memberships: they went with it, so deliveries
        // into rooms wait for the rejoin (and what is in doubt there goes first).
        self.roomsConnectionLost(resumable: false)
        if self.dependencies.configuration.archiveCheck == nil {
            // No archive to ask: the senders try again (at least once).
            for batch in doubt.batches { batch.waiter.complete(.failure(XMPPSessionError.disconnected)) }
        } else {
            self.inDoubt.add(doubt)
        }
        self.abandonResumption()
    }

    /// What an earlier owner of the account may have sent (``Configuration/inherited``) as
    /// in-doubt messages, and the latest its stream can have been lost (so a server
    /// restart since is never missed); nil when there is nothing, or no archive check.
    static func inheritedDoubt(_ configuration: Configuration, now: C.Instant) -> (InDoubtMessages, C.Instant)? {
        guard let inherited = configuration.priorSession, !inherited.messageIDs.isEmpty, configuration.archiveCheck != nil else { return nil }
        var doubt = InDoubtMessages()
        doubt.restoredIDs = inherited.messageIDs
        doubt.sentSince = inherited.since
        doubt.sessionID = inherited.session?.id
        return (doubt, now.advanced(by: .zero - max(.zero, inherited.lostFor)))
    }

    /// Looks the in-doubt messages up, settles their senders and sends again what is not
    /// there, in order, before anything new: messages to contacts in the account's archive,
    /// messages said in a room as reflected by it or in the room's archive (those go again
    /// once the room is joined, ahead of anything new to it). Without an answer from an
    /// archive everything in doubt there is sent again (at least once) and counted in the log.
    /// `resumed`: this stream resumed the last session (XEP-0198 §5); when that is the
    /// session the doubt was written on (an earlier owner's, inherited), the server kept it
    /// through the loss, so it has not restarted since.
    func checkInDoubt(on connection: XMPPConnection, resumed: Bool) async {
        guard !self.inDoubt.messages.isEmpty, self.dependencies.configuration.archiveCheck != nil else { return }
        await self.check(self.inDoubt.take(), on: connection, resumed: resumed)
    }

    /// Looks up in the room's archive (XEP-0313 on the room's JID) what we left `room` with
    /// unreflected (``RoomTable/Entry/leftUnreflected``, XEP-0045 §7.2.2), now that we are
    /// back in it: what is not there is said again first (``resendAfterJoin(_:)``).
    func checkLeftUnreflected(in room: JID) async {
        guard let doubt = self.rooms.entries[room]?.leftUnreflected, !doubt.isEmpty, let connection = self.current.connection else { return }
        self.rooms.entries[room]?.leftUnreflected = InDoubtMessages()
        await self.check(doubt, on: connection, resumed: false)
    }

    /// The check itself (``checkInDoubt(on:resumed:)``): each archive asked in turn
    /// (XEP-0313 §4), the senders settled, the rest sent again.
    private func check(_ doubt: InDoubtMessages, on connection: XMPPConnection, resumed: Bool) async {
        guard let limits = self.dependencies.configuration.archiveCheck else { return }
        let started = self.dependencies.clock.now
        // What a room reflected reached it (XEP-0045 §7.2.2): no need to look.
        var archived = Set(doubt.batches.flatMap { batch -> [String] in
            guard let room = batch.room, let machine = self.rooms.entries[room]?.machine else { return [] }
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
        for (room, ids) in archives where !ids.subtracting(archived).isEmpty && (room == nil || self.rooms.entries[room!] != nil) {
            let check = ArchiveCheckStateMachine(
                archive: room ?? self.machine.ownJID, room: room != nil, inDoubt: ids.subtracting(archived), sentSince: doubt.sentSince, configuration: limits
            )
            guard let (finished, action) = await self.run(check, on: connection) else {
                // The connection went while asking: the next stream asks again (these first);
                // a stopping session has no next stream, so their senders decide.
                guard !self.lifecycle.isStopping else {
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
        // A server that crashed may have archived messages for us and never routed them:
        // unless it ended the stream itself (alive, done with each) or says it has not
        // restarted since, those go again (at least once).
        let timeout = self.dependencies.configuration.requestTimeout
        var restarted = "not asked"
        var uncertain = 0
        if doubt.serverEndedStream {
            restarted = "no (it ended the stream)"
        } else if resumed, let written = doubt.sessionID, written == self.streamManagement.resumption?.id {
            restarted = "no (the session was resumed)"
        } else if found > 0, checks.contains(where: { !$0.isRoom && !$0.archived.isEmpty }) {
            let answer = await self.serverRestartedSinceLoss(timeout: timeout)
            restarted = answer.map { "\($0)" } ?? "unknown"
            if answer != false {
                let software = await self.serverSoftware(timeout: timeout)
                for check in checks {
                    let doubtful = check.uncertain(serverRestarted: answer, oneStanzaAtATime: ArchiveCheckStateMachine.handlesOneStanzaAtATime(software: software))
                    uncertain += doubtful.count
                    archived.subtract(doubtful)
                }
            }
        }
        let (settled, batches) = doubt.settle(archived: archived)
        for waiter in settled { waiter.complete(.success(())) }
        var toContacts: [InDoubtMessages.Batch] = []
        var inRooms = 0
        for batch in batches {
            guard let room = batch.room else {
                toContacts.append(batch)
                continue
            }
            if self.rooms.entries[room] != nil {
                // Said again once the room is joined (this stream's join is still to come).
                self.rooms.entries[room]?.resend.append(batch)
                inRooms += batch.messages.count
            } else {
                // The room was taken out meanwhile: its sender decides.
                batch.waiter.complete(.failure(XMPPSessionError.disconnected))
            }
        }
        let resent = await self.sendAgain(toContacts, on: connection)
        self.inDoubt.settledAll()
        let restoredArchived = doubt.restoredIDs.filter { archived.contains($0) }
        if !restoredArchived.isEmpty { await self.emit(.resumedAfterRestart(handledIDs: restoredArchived)) }
        let elapsed = started.duration(to: self.dependencies.clock.now)
        let metadata: Logger.Metadata = [
            "in doubt": "\(doubt.ids.count)", "found": "\(found)", "reflected": "\(reflected)",
            "sent again": "\(resent + inRooms + doubt.restoredIDs.count - restoredArchived.count)",
            "queries": "\(pages)", "server restarted": "\(restarted)", "uncertain": "\(uncertain)", "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
            "outcome": "\(endings.isEmpty ? "all reflected" : endings.joined(separator: "; "))",
        ]
        if unreadable {
            self.dependencies.logger.warning("the archive could not be read; in-doubt messages sent again (at least once)", metadata: metadata)
        } else {
            self.dependencies.logger.info("in-doubt messages checked against the archive", metadata: metadata)
        }
    }

    /// Runs one archive check to its end on `connection`: the machine as it finished and its
    /// last action; nil when the connection went meanwhile.
    private func run(_ check: ArchiveCheckStateMachine, on connection: XMPPConnection) async -> (ArchiveCheckStateMachine, ArchiveCheckStateMachine.Action)? {
        var check = check
        let key = self.nextID()
        var action = check.start(queryID: key)
        self.inDoubt.started(check, key: key)
        let timeout = self.dependencies.configuration.requestTimeout
        while let query = await self.archiveQuery(for: action, on: connection) {
            let next: ArchiveCheckStateMachine.Action?
            do {
                let answer = try await self.request(query, timeout: timeout)
                let nextQueryID = self.nextID()
                next = self.inDoubt.update(key) { $0.answered(answer, nextQueryID: nextQueryID) } ?? nil
            } catch XMPPSessionError.stanzaError(let stanzaError) {
                let nextQueryID = self.nextID()
                next = self.inDoubt.update(key) { $0.failed("stanza error \(stanzaError)", error: stanzaError, nextQueryID: nextQueryID) } ?? nil
            } catch {
                let nextQueryID = self.nextID()
                next = self.inDoubt.update(key) { $0.failed("\(error)", error: nil, nextQueryID: nextQueryID) } ?? nil
            }
            guard let next else { break }
            action = next
        }
        let finished = self.inDoubt.finished(key)
        // Cancelled: the connection's task group is ending, so the connection is going.
        guard let finished, case .finished = action, self.current.connection === connection, !Task.isCancelled else { return nil }
        return (finished, action)
    }

    /// Says again, first thing after `room` is joined, what was in doubt there and not found
    /// (``checkInDoubt(on:resumed:)``), each batch acknowledged as any delivery is.
    func resendAfterJoin(_ room: JID) async {
        guard let batches = self.rooms.entries[room]?.resend, !batches.isEmpty, let connection = self.current.connection else { return }
        self.rooms.entries[room]?.resend = []
        for message in batches.flatMap(\.messages) {
            if let id = message[attribute: "id"] { self.rooms.entries[room]?.machine.sending(id: id) }
        }
        if self.streamManagement.isCounting {
            self.dependencies.logger.info("in-doubt messages said again in the room", metadata: ["room": "\(room)", "messages": "\(batches.reduce(0) { $0 + $1.messages.count })"])
        }
        await self.sendAgain(batches, on: connection)
    }

    /// Sends `batches` again in order with one `<r/>`, each sender acknowledged by the server's
    /// acknowledgement as any delivery is (XEP-0198 §4); on a stream that does not count,
    /// the senders are failed and send again themselves. Returns how many messages it took.
    @discardableResult
    private func sendAgain(_ batches: [InDoubtMessages.Batch], on connection: XMPPConnection) async -> Int {
        var elements: [XMLElement] = []
        for batch in batches {
            elements += batch.messages
            if self.streamManagement.isCounting {
                self.acknowledgements.wait(
                    AcknowledgementWaiter(
                        number: self.streamManagement.sent &+ UInt32(truncatingIfNeeded: elements.count), waiter: batch.waiter, sentAt: Date(),
                        count: batch.messages.count, room: batch.room, messages: batch.messages
                    )
                )
            } else {
                batch.waiter.complete(.failure(XMPPSessionError.disconnected))
            }
        }
        if self.streamManagement.isCounting, !elements.isEmpty {
            // A lost connection's end fails (or keeps, to resume) these waiters.
            try? await self.transmit(elements + [self.streamManagement.requestAck()], on: connection)
        }
        return elements.count
    }

    /// The request `action` asks for, after the wait a retry asks for; nil when the check is
    /// done, or `connection` went or the task was cancelled meanwhile.
    private func archiveQuery(for action: ArchiveCheckStateMachine.Action, on connection: XMPPConnection) async -> IQ? {
        switch action {
        case .query(let query):
            return query
        case .retry(let query, let delay, let reason):
            guard self.current.connection === connection else { return nil }
            self.dependencies.logger.info("the archive could not answer for now; asking again", metadata: ["in": "\(delay)", "error": "\(reason)"])
            // Not cut short by a lost connection (at most a few seconds): looked at after.
            try? await self.dependencies.clock.sleep(until: self.dependencies.clock.now.advanced(by: delay), tolerance: nil)
            return self.current.connection === connection && !Task.isCancelled ? query : nil
        case .finished:
            return nil
        }
    }

    /// The server's answer to `<query xmlns=namespace/>` (an IQ get to our domain), e.g.
    /// XEP-0092 software version or XEP-0012 uptime; nil when it gives none.
    func queryServer(_ namespace: String, timeout: Duration) async -> XMLElement? {
        guard let domain = try? JID(self.machine.ownJID.domainpart) else { return nil }
        let query = IQ(type: .get, id: self.nextID(), to: domain, payload: XMLElement(name: "query", namespace: namespace))
        return (try? await self.request(query, timeout: timeout))?.payload
    }

    /// The server's software name: its XEP-0092 answer, else the name of its XEP-0030
    /// `server` identity (operators turn `mod_version` off; Prosody's and ejabberd's disco
    /// identities carry their names all the same). Nil when neither says.
    func serverSoftware(timeout: Duration) async -> String? {
        if let name = await self.queryServer("jabber:iq:version", timeout: timeout)?.firstChild(named: "name", namespace: "jabber:iq:version")?.text {
            return name
        }
        let info = await self.queryServer(EntityCapabilities.discoInfoNamespace, timeout: timeout)
        return info?.elements.first { $0.name == "identity" && $0[attribute: "category"] == "server" }?[attribute: "name"]
    }

    /// Whether the server may have started after this session's last connection was lost:
    /// its uptime (XEP-0012 §4, last activity of the server itself) is not longer than the
    /// time since. Servers count whole seconds, so one second of doubt counts as "may
    /// have" (never a missed restart; a server younger than two seconds more than the
    /// outage looks restarted). Nil when unknown (no loss in this process, or no answer).
    func serverRestartedSinceLoss(timeout: Duration) async -> Bool? {
        guard let lost = self.inDoubt.lossToCompare,
            let seconds = await self.queryServer("jabber:iq:last", timeout: timeout)?[attribute: "seconds"].flatMap({ Int64($0) })
        else { return nil }
        return Duration.seconds(seconds) < lost.duration(to: self.dependencies.clock.now) + .seconds(1)
    }
}
