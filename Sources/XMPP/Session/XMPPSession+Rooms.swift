import Foundation

/// Rooms (XEP-0045) in the session: each room's ``RoomStateMachine`` decides; this sends its
/// presences and self-pings (XEP-0410), keeps one timer for all rooms, and catches up from
/// each room's archive (XEP-0313) after every join.
extension XMPPSession {
    /// Sets the rooms to sit in: new ones are joined at once when online, removed ones left,
    /// changed ones (nick, password) and stopped ones (a reload tries them again) left and
    /// joined afresh. `cursors` are stored archive positions for rooms new to this session.
    /// The table changes before any stanza is written, so a call that overlaps another
    /// (a reload and a route change) cannot undo it.
    public func setRooms(_ rooms: [RoomConfiguration], cursors: [JID: ArchiveCursor] = [:]) async {
        let wanted = Dictionary(rooms.map { ($0.jid.bare, $0) }, uniquingKeysWith: { first, _ in first })
        var leaves: [XMLElement] = []
        for (jid, entry) in self.rooms.entries {
            let stopped: Bool
            if case .stopped = entry.machine.state { stopped = true } else { stopped = false }
            guard wanted[jid] != entry.machine.configuration || stopped else { continue }
            var entry = entry
            if let leave = entry.machine.leave() { leaves.append(leave) }
            // What waited to be said again there, or for its reflection: its senders decide anew.
            for batch in entry.resend + entry.leftUnreflected.batches + self.rooms.unreflected.take(in: jid) { batch.waiter.complete(.failure(XMPPSessionError.disconnected)) }
            self.rooms.entries.removeValue(forKey: jid)
            if wanted[jid] == nil {
                self.rooms.removed.insert(jid)
                self.dependencies.logger.info("left room", metadata: ["room": "\(jid)"])
            }
        }
        let now = self.dependencies.clock.now
        var joins: [(room: JID, actions: [RoomStateMachine<C.Instant>.Action])] = []
        for (jid, room) in wanted where self.rooms.entries[jid] == nil {
            self.rooms.removed.remove(jid)
            var entry = RoomTable<C.Instant>.entry(
                for: room, timings: self.dependencies.configuration.roomTimings, catchUp: self.dependencies.configuration.catchUp,
                cursor: cursors[jid] ?? self.dependencies.configuration.roomCursors[jid]
            )
            joins.append((jid, self.rooms.online ? entry.machine.connected(now: now) : []))
            self.rooms.entries[jid] = entry
        }
        if !leaves.isEmpty, let connection = self.current.connection { try? await self.transmit(leaves, on: connection) }
        for join in joins { await self.performRoom(join.actions, room: join.room) }
        self.armRoomTimer()
    }

    /// Each room's state, by JID.
    public var roomStatuses: [RoomStatus] {
        self.rooms.entries.keys.sorted { $0.description < $1.description }.compactMap { self.rooms.status(of: $0) }
    }

    /// Whether a delivery to `jid` can go now; when it can, `id` is remembered so its
    /// reflection is recognised as ours (never by nick).
    public func checkRoomSend(to jid: JID, id: String) -> RoomSendCheck {
        self.rooms.checkSend(to: jid, id: id)
    }

    // MARK: - Connection

    /// After a (re)connect, once online: join every room; after a resumed stream (XEP-0198)
    /// the rooms we are in are kept.
    func joinRooms(resumed: Bool) async {
        self.rooms.online = true
        let now = self.dependencies.clock.now
        // No reflection could come while the connection was down: each wait starts again.
        self.rooms.unreflected.restartDeadlines(at: now.advanced(by: self.dependencies.configuration.roomTimings.reflectionTimeout))
        for jid in self.rooms.entries.keys.sorted(by: { $0.description < $1.description }) {
            guard var entry = self.rooms.entries[jid] else { continue }
            if resumed, entry.machine.isJoined {
                // Still in the room; a catch-up the lost connection cut short runs again, and
                // what a check of this stream found missing there is said again now.
                if entry.archive?.needsCatchUp == true { self.startAfterJoin(jid) }
                if !entry.resend.isEmpty { await self.resendAfterJoin(jid) }
                continue
            }
            _ = entry.machine.disconnected()
            let actions = entry.machine.connected(now: now)
            self.rooms.entries[jid] = entry
            await self.performRoom(actions, room: jid)
        }
        self.armRoomTimer()
    }

    /// The connection is gone; with a resumable stream the rooms are kept for a resumption.
    /// The work after a join ended with the connection (its task group), done or not: a
    /// catch-up it cut short is due again, a self-ping it waited for is no longer awaited,
    /// and a lookup of what we left a room with unreflected that never ran (or was cut
    /// short, ``checkLeftUnreflected(in:)`` keeps that part itself) goes to the next
    /// stream's doubt, so the room's gate does not stay shut.
    func roomsConnectionLost(resumable: Bool) {
        self.current.timers.cancel(.rooms)
        let doubt = self.rooms.connectionLost(resumable: resumable, checksArchive: self.dependencies.configuration.archiveCheck != nil)
        if !doubt.isEmpty { self.inDoubt.add(doubt) }
    }

    // MARK: - Stanzas

    /// What the session does with `element` (``InboundDispatch``): a room's part is carried
    /// out here, the rest returned for the session to perform.
    func stanzaActions(for element: XMLElement) async -> [SessionStateMachine<C.Instant>.Action] {
        let outcome = InboundDispatch<C.Instant>.read(
            element, inDoubt: &self.inDoubt, rooms: &self.rooms, catchUp: &self.catchUp, machine: &self.machine, now: { self.dependencies.clock.now }
        )
        let room: JID, inbound: [RoomInbound<C.Instant>.Action]
        switch outcome {
        case .taken: return []
        case .session(let actions): return actions
        case .room(let jid, let actions): (room, inbound) = (jid, actions)
        }
        var actions: [SessionStateMachine<C.Instant>.Action] = []
        for action in inbound {
            switch action {
            case .room(let roomActions):
                await self.performRoom(roomActions, room: room)
                self.armRoomTimer()
            case .settled(let id):
                self.reflectionArrived(id, in: room)
            case .emit(let message):
                actions.append(.emitMessage(message, carbon: nil))
            case .copyStanzaID(let id, let stanzaID):
                actions.append(.copyStanzaID(room: room, id: id, stanzaID: stanzaID))
            case .ignored(let reason):
                actions.append(.ignored(reason))
            case .notEmitted(let reason):
                self.dependencies.logger.debug("room message not passed on", metadata: ["room": "\(room)", "reason": "\(reason)"])
            }
        }
        return actions
    }

    // MARK: - Actions

    func performRoom(_ actions: [RoomStateMachine<C.Instant>.Action], room: JID) async {
        for action in actions {
            switch action {
            case .send(let element):
                guard let connection = self.current.connection else { continue }
                try? await self.transmit([element], on: connection)
            case .joined(let nick):
                self.rooms.entries[room]?.reason = nil
                self.dependencies.logger.info("joined room", metadata: ["room": "\(room)", "nick": "\(nick)"])
                // What was in doubt here goes first, before any delivery waiting for the join.
                // What we left the room with unreflected is looked up in its archive first,
                // after the join (by the after-join work: this runs in the read loop, which
                // the archive's answers come through); deliveries wait for that.
                if self.rooms.entries[room]?.leftUnreflected.isEmpty == false {
                    self.rooms.entries[room]?.checkingLeftUnreflected = true
                } else {
                    await self.resendAfterJoin(room)
                    await self.emitRoomStatus(room)
                }
                // Whatever was said while we were out is a gap, from this moment.
                self.rooms.entries[room]?.archive?.streamStarted(continuesLast: false)
                self.startAfterJoin(room)
            case .left(let reason):
                self.rooms.entries[room]?.reason = reason
                self.dependencies.logger.notice("out of room; rejoining", metadata: ["room": "\(room)", "reason": "\(reason)"])
                await self.emitRoomStatus(room)
            case .stopped(let reason):
                self.rooms.entries[room]?.reason = reason
                self.dependencies.logger.error("room stopped; its deliveries wait until a reload", metadata: ["room": "\(room)", "reason": "\(reason)"])
                await self.emitRoomStatus(room)
            case .occupant(let nick, let joined):
                await self.emit(.occupant(room: room, nick: nick, joined: joined))
            case .selfPing(let to):
                let ping = IQ(type: .get, id: self.nextID(), to: to, payload: XMLElement(name: "ping", namespace: "urn:xmpp:ping"))
                let timeout = self.dependencies.configuration.roomTimings.pingTimeout
                self.spawn {
                    let outcome: RoomStateMachine<C.Instant>.SelfPingOutcome
                    do {
                        _ = try await self.request(ping, timeout: timeout)
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: true, condition: nil)
                    } catch XMPPSessionError.stanzaError(let error) {
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: true, condition: error.condition)
                    } catch {
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: false, condition: nil)
                    }
                    await self.selfPingAnswered(outcome, room: room)
                }
            case .configureInstantRoom:
                var query = XMLElement(name: "query", namespace: "http://jabber.org/protocol/muc#owner")
                query.append(XMLElement(name: "x", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "type", value: "submit")]))
                let iq = IQ(type: .set, id: self.nextID(), to: room, payload: query)
                let logger = self.dependencies.logger
                self.spawn {
                    do {
                        _ = try await self.request(iq)
                        logger.info("created the room with its default configuration", metadata: ["room": "\(room)"])
                    } catch {
                        logger.warning("created the room but could not configure it", metadata: ["room": "\(room)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    private func selfPingAnswered(_ outcome: RoomStateMachine<C.Instant>.SelfPingOutcome, room: JID) async {
        guard var entry = self.rooms.entries[room] else { return }
        let actions = entry.machine.selfPingAnswered(outcome, now: self.dependencies.clock.now)
        self.rooms.entries[room] = entry
        if case .unreachable(let reason) = outcome { self.dependencies.logger.notice("room self-ping inconclusive", metadata: ["room": "\(room)", "reason": "\(reason)"]) }
        await self.performRoom(actions, room: room)
        self.armRoomTimer()
    }

    private func emitRoomStatus(_ room: JID) async {
        guard let status = self.rooms.status(of: room) else { return }
        // Out of the room with the session alive (kicked, the room gone): what waits for its
        // reflection there will not get it; it is looked up after the rejoin.
        if status.state != .joined { self.leftWithUnreflected(room) }
        await self.emit(.roomChanged(status))
    }

    // MARK: - Timer

    /// Keeps one timer, for the earliest deadline of any room.
    func armRoomTimer() {
        guard self.rooms.online, let next = self.rooms.nextDeadline else {
            self.current.timers.cancel(.rooms)
            return
        }
        if self.current.timers.deadline(of: .rooms) == next { return }
        self.armTimer(.rooms, at: next)
    }

    func roomTimerFired() async {
        let now = self.dependencies.clock.now
        self.expireUnreflected(now: now)
        for jid in self.rooms.entries.keys {
            guard var entry = self.rooms.entries[jid] else { continue }
            let actions = entry.machine.timerFired(now: now)
            self.rooms.entries[jid] = entry
            await self.performRoom(actions, room: jid)
        }
        self.armRoomTimer()
    }

    // MARK: - After a join

    /// Starts the work after a join (the room's features, then the archive catch-up) beside
    /// the read loop, replacing any still running for this room.
    func startAfterJoin(_ room: JID) {
        let job = self.nextID()
        self.rooms.entries[room]?.afterJoin = job
        self.spawn { await self.afterJoin(room, job: job) }
    }

    /// Asks the room what it supports (XEP-0030): `stanza-id`s are trusted only from a room
    /// that says it gives them (XEP-0359 §6), and its archive is read only if it has one.
    private func afterJoin(_ room: JID, job: String) async {
        if self.rooms.entries[room]?.checkingLeftUnreflected == true {
            await self.checkLeftUnreflected(in: room)
            // Replaced by a later join's (or ended with the connection): that one decides.
            guard self.rooms.entries[room]?.afterJoin == job else { return }
            // Said again only into the room we are in (a second kick meanwhile keeps them for
            // the next join); the gate opens either way, so it never stays shut.
            if self.rooms.entries[room]?.machine.isJoined == true { await self.resendAfterJoin(room) }
            self.rooms.entries[room]?.checkingLeftUnreflected = false
            await self.emitRoomStatus(room)
        }
        var features: Set<String>?
        let disco = IQ(type: .get, id: self.nextID(), to: room, payload: XMLElement(name: "query", namespace: EntityCapabilities.discoInfoNamespace))
        if let info = try? await self.request(disco) {
            features = Set(info.payload?.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] } ?? [])
        }
        guard !Task.isCancelled, self.rooms.entries[room]?.afterJoin == job else { return }
        if let features {
            self.rooms.entries[room]?.trustsStanzaIDs = features.contains(ArchiveCatchUpStateMachine.stanzaIDNamespace)
            if !features.contains(ArchiveCatchUpStateMachine.namespace), self.rooms.entries[room]?.archive != nil {
                self.dependencies.logger.notice("the room keeps no archive: messages missed while out of it are not caught up", metadata: ["room": "\(room)"])
                return
            }
        }
        await self.catchUpRoom(room)
    }

    /// Reads the room's archive after the stored cursor (XEP-0313 §5), page by page; the
    /// results arrive through the read loop, in order. Answers for a query that is no longer
    /// the room's current one (a rejoin started another) are dropped.
    private func catchUpRoom(_ room: JID) async {
        guard var action = self.rooms.entries[room]?.archive?.start(now: Date(), queryID: self.nextID()) else { return }
        while true {
            switch action {
            case .query(var query):
                query.to = room
                let next: ArchiveCatchUpStateMachine.Action?
                let result: Result<IQ, any Error>
                do {
                    result = .success(try await self.request(query))
                } catch {
                    result = .failure(error)
                }
                guard !Task.isCancelled, self.rooms.entries[room]?.archive?.currentQueryID == query.id else { return }
                switch result {
                case .success(let answer):
                    next = self.rooms.entries[room]?.archive?.answered(answer, now: Date(), nextQueryID: self.nextID())
                case .failure(XMPPSessionError.stanzaError(let error)):
                    next = self.rooms.entries[room]?.archive?.failed(error.condition, now: Date(), nextQueryID: self.nextID())
                case .failure:
                    next = self.rooms.entries[room]?.archive?.failed(nil, now: Date(), nextQueryID: self.nextID())
                }
                guard let next else { return }
                action = next
            case .caughtUp(let cursor, let emitted, let pages):
                self.dependencies.logger.info("caught up from the room's archive", metadata: ["room": "\(room)", "archived messages": "\(emitted)", "pages": "\(pages)"])
                if let cursor { await self.emit(.roomCursorMoved(room: room, cursor)) }
                return
            case .gaveUp(let reason):
                self.dependencies.logger.warning("room archive catch-up stopped; tried again after the next join", metadata: ["room": "\(room)", "reason": "\(reason)"])
                return
            case .unavailable(let reason):
                self.dependencies.logger.notice("the room keeps no archive: messages missed while out of it are not caught up", metadata: ["room": "\(room)", "reason": "\(reason)"])
                return
            }
        }
    }
}
