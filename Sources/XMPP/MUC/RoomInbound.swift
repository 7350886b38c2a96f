import StanzaIdentity

/// How a stanza from a room we sit in is read (XEP-0045): its presence and messages go to
/// the room's ``RoomStateMachine``, a result of the room's archive query to its catch-up
/// (XEP-0313), and the verdicts become what the session does. Pure: the session runs the
/// actions, in order. The room's entry is changed in place (no copy of the ids it
/// remembers per message).
enum RoomInbound<Instant: InstantProtocol & Sendable> where Instant.Duration == Duration {
    enum Action: Equatable {
        /// The room's machine asks for these (presences, self-pings, status changes); the
        /// room timer is armed again afterwards.
        case room([RoomStateMachine<Instant>.Action])
        /// Our message `id` came back, reflected or bounced (XEP-0045 §7.2.2): it is settled.
        case settled(id: String)
        /// A message for the session's consumer (an occupant's, or an error bouncing ours).
        case emit(Message)
        /// The room's stanza-id of our copy `id` (XEP-0359), for the reference map.
        case copyStanzaID(id: String, stanzaID: StanzaID)
        /// Dropped, with why: logged as ignored.
        case ignored(String)
        /// Read and not given to the application (a history copy, our own echo without an id), with why.
        case notEmitted(String)
    }

    /// Reads `element`, a presence or message from `room`, against the room's `entry`.
    static func read(_ element: XMLElement, from room: JID, entry: inout RoomTable<Instant>.Entry, now: Instant) -> [Action] {
        if element.name == "presence" {
            guard let presence = try? Presence(element: element) else { return [.ignored("unreadable presence from room \(room)")] }
            return [.room(entry.machine.received(presence, now: now))]
        }
        switch entry.archive?.received(element) {
        case .archived(var message, let cursor):
            guard case .occupant = entry.machine.received(message, now: now) else { return [] }
            if case .after(let id) = cursor { message.stanzaID = id }
            message.archiveCursor = cursor
            return [.emit(message)]
        case .skipped:
            return []
        case .forged(let reason):
            return [.ignored(reason)]
        case .notAResult, nil:
            break
        }
        guard var message = try? Message(element: element) else { return [.ignored("unreadable message from room \(room)")] }
        switch entry.machine.received(message, now: now) {
        case .occupant:
            message.stanzaID = entry.trustsStanzaIDs ? ArchiveCatchUpStateMachine.stanzaID(of: message, ownJID: room) : nil
            message.archiveCursor = entry.archive?.liveMessage(stanzaID: message.stanzaID)
            return [.emit(message)]
        case .echo:
            guard let id = OriginID.of(message) ?? message.id else { return [] }
            guard entry.trustsStanzaIDs, let stanzaID = ArchiveCatchUpStateMachine.stanzaID(of: message, ownJID: room) else { return [.settled(id: id)] }
            return [.settled(id: id), .copyStanzaID(id: id, stanzaID: stanzaID)]
        case .ignored(let reason):
            // Errors still go to the owner: they are bounces of our deliveries.
            guard message.type == .error else { return [.notEmitted(reason)] }
            return (message.id.map { [Action.settled(id: $0)] } ?? []) + [.emit(message)]
        case .refusedForNow(let actions):
            // Refused for now (out of the room, its service away): sent again once we are back in.
            message.error?.type = .wait
            return (message.id.map { [Action.settled(id: $0)] } ?? []) + [.room(actions), .emit(message)]
        }
    }
}
