import Foundation

/// The rooms one session sits in: each room's ``RoomStateMachine`` and the machine that
/// catches up from its archive (XEP-0313 on the room JID), by the room's bare JID.
struct RoomTable<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    struct Entry: Sendable {
        var machine: RoomStateMachine<Instant>
        var archive: ArchiveCatchUpStateMachine?
        /// Why the room is out (waiting or stopped), for status.
        var reason: String?
        /// The work after a join (features, archive catch-up) under way, by its id: one per
        /// room at a time; one a later join replaced stops at its next step.
        var afterJoin: String?
        /// The room says it gives `stanza-id`s (XEP-0359 §6, disco#info `urn:xmpp:sid:0`);
        /// until its features are known, assumed.
        var trustsStanzaIDs = true
        /// Messages in doubt after a lost session and not found in the room (nor reflected):
        /// said again first thing after the next join (``SessionRooms/resendAfterJoin(_:in:)``).
        var resend: [InDoubtMessages.Batch] = []
        /// Messages said here whose reflection (XEP-0045 §7.2.2) our leaving the room cut off
        /// while the session lived (kicked, §9.1; the room's service shutting down, status
        /// 332): they may be in the room or not, so they are looked up in its archive
        /// (XEP-0313) after the rejoin, or by the next stream if the session goes first,
        /// before anything is said there.
        var leftUnreflected = InDoubtMessages()
        /// ``leftUnreflected`` is being looked up after a join: deliveries into the room wait.
        var checkingLeftUnreflected = false
    }

    var entries: [JID: Entry] = [:]

    /// A fresh entry for `room`, out of it until joined; its archive is read after `cursor`.
    static func entry(
        for room: RoomConfiguration, timings: RoomTimings, catchUp: ArchiveCatchUpStateMachine.Configuration?, cursor: ArchiveCursor?
    ) -> Entry {
        Entry(
            machine: RoomStateMachine(configuration: room, timings: timings),
            archive: catchUp.map { ArchiveCatchUpStateMachine(ownJID: room.jid, cursor: cursor, configuration: $0, owner: .room) }
        )
    }
    /// Rooms are joined (or being joined) on the current connection.
    var online = false
    /// Acknowledged batches said in rooms, waiting for their reflections.
    var unreflected = UnreflectedMessages<Instant>()
    /// Rooms taken out of the configuration in this process: what is still queued for them
    /// is not delivered as if they were contacts.
    var removed: Set<JID> = []

    /// Fails the senders of everything waiting to be said again in any room, or to be
    /// looked up in its archive (``Entry/resend``, ``Entry/leftUnreflected``): nobody will
    /// on this session.
    mutating func failWaiting(_ error: any Error) {
        for room in self.entries.keys {
            for batch in (self.entries[room]?.resend ?? []) + (self.entries[room]?.leftUnreflected.batches ?? []) { batch.waiter.complete(.failure(error)) }
            self.entries[room]?.resend = []
            self.entries[room]?.leftUnreflected = InDoubtMessages()
        }
    }

    /// Every room's ``Entry/leftUnreflected``, taken out (the session is lost: the next
    /// stream looks them up with the rest).
    mutating func takeLeftUnreflected() -> InDoubtMessages {
        var doubt = InDoubtMessages()
        for room in self.entries.keys.sorted(by: { $0.description < $1.description }) {
            guard let taken = self.entries[room]?.leftUnreflected, !taken.isEmpty else { continue }
            doubt.merge(taken)
            self.entries[room]?.leftUnreflected = InDoubtMessages()
        }
        return doubt
    }

    func contains(_ jid: JID?) -> Bool {
        guard let jid else { return false }
        return self.entries[jid.bare] != nil
    }

    /// The earliest moment some room's machine wants ``RoomStateMachine/timerFired(now:)``,
    /// or a reflection wait ends.
    var nextDeadline: Instant? {
        (self.entries.values.compactMap(\.machine.nextDeadline) + [self.unreflected.nextDeadline].compactMap { $0 }).min()
    }

    func status(of jid: JID) -> RoomStatus? {
        guard let entry = self.entries[jid] else { return nil }
        let state: RoomStatus.State
        switch entry.machine.state {
        case .offline: state = .offline
        case .joining: state = .joining
        case .joined: state = .joined
        case .waiting: state = .waiting
        case .stopped: state = .stopped
        }
        return RoomStatus(jid: jid.description, nick: entry.machine.nick, state: state, reason: entry.reason, occupants: entry.machine.occupants.count)
    }

    /// Whether a delivery to `jid` can go now; when it can, `id` is remembered so its
    /// reflection is recognised as ours (XEP-0045 §7.2.2; never by nick). Changed in
    /// place: the remembered ids are not copied per message.
    mutating func checkSend(to jid: JID, id: String) -> RoomSendCheck {
        let room = jid.bare
        guard let joined = self.entries[room]?.machine.isJoined else { return self.removed.contains(room) ? .removed : .notARoom }
        guard joined else { return .notJoined(self.entries[room]?.reason ?? "not in the room yet") }
        guard self.entries[room]?.checkingLeftUnreflected != true else { return .notJoined("looking up in the room's archive what we left it with") }
        self.entries[room]?.machine.sending(id: id)
        return .joined
    }

    /// The connection is gone; with a `resumable` stream the rooms are kept for a
    /// resumption. The work after a join ended with the connection: a catch-up it cut short
    /// is due again, a self-ping it waited for is no longer awaited, and a lookup of what
    /// we left a room with unreflected that never ran is returned for the next stream's
    /// doubt (when `checksArchive`; else it stays with the room), so its gate does not stay
    /// shut.
    mutating func connectionLost(resumable: Bool, checksArchive: Bool) -> InDoubtMessages {
        self.online = false
        var doubt = InDoubtMessages()
        for jid in self.entries.keys {
            guard var entry = self.entries[jid] else { continue }
            entry.archive?.connectionLost()
            entry.machine.connectionInterrupted()
            entry.afterJoin = nil
            if entry.checkingLeftUnreflected {
                entry.checkingLeftUnreflected = false
                if !entry.leftUnreflected.isEmpty, checksArchive {
                    doubt.merge(entry.leftUnreflected)
                    entry.leftUnreflected = InDoubtMessages()
                }
            }
            if !resumable { _ = entry.machine.disconnected() }
            self.entries[jid] = entry
        }
        return doubt
    }
}
