import Foundation

/// Rooms (XEP-0045) in a session: each room's ``RoomStateMachine`` decides (kept in the
/// ``RoomTable``); this sends its presences and self-pings (XEP-0410), keeps one timer for all
/// rooms, and catches up from each room's archive (XEP-0313) after every join.
///
/// Owned by its session and run on it (each method takes the session `isolated`).
final class SessionRooms<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// The rooms we sit in.
    var table = RoomTable<C.Instant>()

    init(_ configuration: XMPPSessionConfiguration<C>) {
        for room in configuration.rooms {
            self.table.entries[room.jid] = RoomTable.entry(
                for: room, timings: configuration.roomTimings, catchUp: configuration.catchUp, cursor: configuration.roomCursors[room.jid]
            )
        }
    }

    /// See ``XMPPSession/setRooms(_:cursors:)``.
    func set(_ rooms: [RoomConfiguration], cursors: [JID: ArchiveCursor], in session: isolated XMPPSession<C>) async {
        let wanted = Dictionary(rooms.map { ($0.jid.bare, $0) }, uniquingKeysWith: { first, _ in first })
        var leaves: [XMLElement] = []
        for (jid, entry) in self.table.entries {
            let stopped: Bool
            if case .stopped = entry.machine.state { stopped = true } else { stopped = false }
            guard wanted[jid] != entry.machine.configuration || stopped else { continue }
            var entry = entry
            if let leave = entry.machine.leave() { leaves.append(leave) }
            // What waited to be said again there, or for its reflection: its senders decide anew.
            for batch in entry.resend + entry.leftUnreflected.batches + self.table.unreflected.take(in: jid) { batch.waiter.complete(.failure(XMPPSessionError.disconnected)) }
            self.table.entries.removeValue(forKey: jid)
            if wanted[jid] == nil {
                self.table.removed.insert(jid)
                session.dependencies.logger.info("left room", metadata: ["room": "\(jid)"])
            }
        }
        let configuration = session.dependencies.configuration
        let now = session.dependencies.clock.now
        var joins: [(room: JID, actions: [RoomStateMachine<C.Instant>.Action])] = []
        for (jid, room) in wanted where self.table.entries[jid] == nil {
            self.table.removed.remove(jid)
            var entry = RoomTable<C.Instant>.entry(
                for: room, timings: configuration.roomTimings, catchUp: configuration.catchUp, cursor: cursors[jid] ?? configuration.roomCursors[jid]
            )
            joins.append((jid, self.table.online ? entry.machine.connected(now: now) : []))
            self.table.entries[jid] = entry
        }
        if !leaves.isEmpty, let connection = session.current.connection { try? await session.transmit(leaves, on: connection) }
        for join in joins { await self.perform(join.actions, room: join.room, in: session) }
        self.armTimer(in: session)
    }

    /// Each room's state, by JID.
    var statuses: [RoomStatus] {
        self.table.entries.keys.sorted { $0.description < $1.description }.compactMap { self.table.status(of: $0) }
    }

    // MARK: - Connection

    /// After a (re)connect, once online: join every room; after a resumed stream (XEP-0198)
    /// the rooms we are in are kept.
    func join(resumed: Bool, in session: isolated XMPPSession<C>) async {
        self.table.online = true
        let now = session.dependencies.clock.now
        // No reflection could come while the connection was down: each wait starts again.
        self.table.unreflected.restartDeadlines(at: now.advanced(by: session.dependencies.configuration.roomTimings.reflectionTimeout))
        for jid in self.table.entries.keys.sorted(by: { $0.description < $1.description }) {
            guard var entry = self.table.entries[jid] else { continue }
            if resumed, entry.machine.isJoined {
                // Still in the room; a catch-up the lost connection cut short runs again, and
                // what a check of this stream found missing there is said again now.
                if entry.archive?.needsCatchUp == true { self.startAfterJoin(jid, in: session) }
                if !entry.resend.isEmpty { await self.resendAfterJoin(jid, in: session) }
                continue
            }
            _ = entry.machine.disconnected()
            let actions = entry.machine.connected(now: now)
            self.table.entries[jid] = entry
            await self.perform(actions, room: jid, in: session)
        }
        self.armTimer(in: session)
    }

    /// The connection is gone; with a resumable stream the rooms are kept for a resumption.
    /// The work after a join ended with the connection (its task group), done or not: a
    /// catch-up it cut short is due again, a self-ping it waited for is no longer awaited,
    /// and a lookup of what we left a room with unreflected that never ran (or was cut
    /// short, ``SessionArchiveCheck/checkLeftUnreflected(room:in:)`` keeps that part
    /// itself) goes to the next stream's doubt, so the room's gate does not stay shut.
    func connectionLost(resumable: Bool, in session: isolated XMPPSession<C>) {
        session.current.timers.cancel(.rooms)
        let doubt = self.table.connectionLost(resumable: resumable, checksArchive: session.dependencies.configuration.archiveCheck != nil)
        if !doubt.isEmpty { session.archiveCheck.inDoubt.add(doubt) }
    }

    /// Carries out a room's part of an inbound stanza (``InboundDispatch``); returns what
    /// is left for the session to perform.
    func read(_ inbound: [RoomInbound<C.Instant>.Action], room: JID, in session: isolated XMPPSession<C>) async -> [SessionStateMachine<C.Instant>.Action] {
        var actions: [SessionStateMachine<C.Instant>.Action] = []
        for action in inbound {
            switch action {
            case .room(let roomActions):
                await self.perform(roomActions, room: room, in: session)
                self.armTimer(in: session)
            case .settled(let id):
                self.reflectionArrived(id, room: room)
            case .emit(let message):
                actions.append(.emitMessage(message, carbon: nil))
            case .copyStanzaID(let id, let stanzaID):
                actions.append(.copyStanzaID(room: room, id: id, stanzaID: stanzaID))
            case .ignored(let reason):
                actions.append(.ignored(reason))
            case .notEmitted(let reason):
                session.dependencies.logger.debug("room message not passed on", metadata: ["room": "\(room)", "reason": "\(reason)"])
            }
        }
        return actions
    }

    // MARK: - Actions

    func perform(_ actions: [RoomStateMachine<C.Instant>.Action], room: JID, in session: isolated XMPPSession<C>) async {
        let logger = session.dependencies.logger
        for action in actions {
            switch action {
            case .send(let element):
                guard let connection = session.current.connection else { continue }
                try? await session.transmit([element], on: connection)
            case .joined(let nick):
                self.table.entries[room]?.reason = nil
                logger.info("joined room", metadata: ["room": "\(room)", "nick": "\(nick)"])
                // What was in doubt here goes first, before any delivery waiting for the join.
                // What we left the room with unreflected is looked up in its archive first,
                // after the join (by the after-join work: this runs in reading, which
                // the archive's answers come through); deliveries wait for that.
                if self.table.entries[room]?.leftUnreflected.isEmpty == false {
                    self.table.entries[room]?.checkingLeftUnreflected = true
                } else {
                    await self.resendAfterJoin(room, in: session)
                    await self.emitStatus(room, in: session)
                }
                // Whatever was said while we were out is a gap, from this moment.
                self.table.entries[room]?.archive?.streamStarted(continuesLast: false)
                self.startAfterJoin(room, in: session)
            case .left(let reason):
                self.table.entries[room]?.reason = reason
                logger.notice("out of room; rejoining", metadata: ["room": "\(room)", "reason": "\(reason)"])
                await self.emitStatus(room, in: session)
            case .stopped(let reason):
                self.table.entries[room]?.reason = reason
                logger.error("room stopped; its deliveries wait until a reload", metadata: ["room": "\(room)", "reason": "\(reason)"])
                await self.emitStatus(room, in: session)
            case .occupant(let nick, let joined):
                await session.emit(.occupant(room: room, nick: nick, joined: joined))
            case .selfPing(let to):
                let ping = IQ(type: .get, id: session.nextID(), to: to, payload: XMLElement(name: "ping", namespace: "urn:xmpp:ping"))
                let timeout = session.dependencies.configuration.roomTimings.pingTimeout
                session.spawn { session in
                    let outcome: RoomStateMachine<C.Instant>.SelfPingOutcome
                    do {
                        _ = try await session.request(ping, timeout: timeout)
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: true, condition: nil)
                    } catch XMPPSessionError.stanzaError(let error) {
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: true, condition: error.condition)
                    } catch {
                        outcome = RoomStateMachine<C.Instant>.selfPingOutcome(answered: false, condition: nil)
                    }
                    await session.rooms.selfPingAnswered(outcome, room: room, in: session)
                }
            case .configureInstantRoom:
                var query = XMLElement(name: "query", namespace: "http://jabber.org/protocol/muc#owner")
                query.append(XMLElement(name: "x", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "type", value: "submit")]))
                let iq = IQ(type: .set, id: session.nextID(), to: room, payload: query)
                session.spawn { session in
                    do {
                        _ = try await session.request(iq)
                        logger.info("created the room with its default configuration", metadata: ["room": "\(room)"])
                    } catch {
                        logger.warning("created the room but could not configure it", metadata: ["room": "\(room)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    private func selfPingAnswered(_ outcome: RoomStateMachine<C.Instant>.SelfPingOutcome, room: JID, in session: isolated XMPPSession<C>) async {
        guard var entry = self.table.entries[room] else { return }
        let actions = entry.machine.selfPingAnswered(outcome, now: session.dependencies.clock.now)
        self.table.entries[room] = entry
        if case .unreachable(let reason) = outcome { session.dependencies.logger.notice("room self-ping inconclusive", metadata: ["room": "\(room)", "reason": "\(reason)"]) }
        await self.perform(actions, room: room, in: session)
        self.armTimer(in: session)
    }

    func emitStatus(_ room: JID, in session: isolated XMPPSession<C>) async {
        guard let status = self.table.status(of: room) else { return }
        // Out of the room with the session alive (kicked, the room gone): what waits for its
        // reflection there will not get it; it is looked up after the rejoin.
        if status.state != .joined { self.leftWithUnreflected(room, in: session) }
        await session.emit(.roomChanged(status))
    }

    // MARK: - Timer

    /// Keeps one timer, for the earliest deadline of any room.
    func armTimer(in session: isolated XMPPSession<C>) {
        guard self.table.online, let next = self.table.nextDeadline else {
            session.current.timers.cancel(.rooms)
            return
        }
        if session.current.timers.deadline(of: .rooms) == next { return }
        session.armTimer(.rooms, at: next)
    }

    func timerFired(in session: isolated XMPPSession<C>) async {
        let now = session.dependencies.clock.now
        self.expireUnreflected(now: now, in: session)
        for jid in self.table.entries.keys {
            guard var entry = self.table.entries[jid] else { continue }
            let actions = entry.machine.timerFired(now: now)
            self.table.entries[jid] = entry
            await self.perform(actions, room: jid, in: session)
        }
        self.armTimer(in: session)
    }
}
