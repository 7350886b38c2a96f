/// Which part of the session reads each stanza it receives, and what that part makes of it
/// (RFC 6120 §8; issue 40), decided without I/O:
/// 1. a result of an archive check under way (XEP-0313 §4) is the check's;
/// 2. a room's presence or message is its room's (XEP-0045, ``RoomInbound``); a groupchat
///    message from no room we sit in is ignored;
/// 3. a result of the account's archive catch-up is the catch-up's (``AccountCatchUp``);
/// 4. anything else is the session machine's (``SessionStateMachine``), its live messages
///    tagged with their stanza-ids and archive cursor.
///
/// The parts are changed in place (no copy of a room's remembered ids per message); the
/// session carries out what comes back, in order. The time is read only for a room's
/// stanza (its machine times self-pings and rejoins).
enum InboundDispatch<Instant: InstantProtocol & Sendable> where Instant.Duration == Duration {
    /// What the session does with one stanza.
    enum Outcome {
        /// An archive check took it: nothing more.
        case taken
        /// Read by `room`'s entry: what the session does for the room, in order.
        case room(JID, [RoomInbound<Instant>.Action])
        /// What the session's machine, or its catch-up, makes of it.
        case session([SessionStateMachine<Instant>.Action])
    }

    static func read(
        _ element: XMLElement, inDoubt: inout InDoubtState<Instant>, rooms: inout RoomTable<Instant>, catchUp: inout AccountCatchUp,
        machine: inout SessionStateMachine<Instant>, now: () -> Instant
    ) -> Outcome {
        if element.name == "message", inDoubt.checkTook(element) { return .taken }
        if element.name == "presence" || element.name == "message", !rooms.entries.isEmpty,
            let from = element[attribute: "from"].flatMap({ try? JID($0) }), rooms.entries[from.bare] != nil
        {
            let room = from.bare
            return .room(room, RoomInbound<Instant>.read(element, from: room, entry: &rooms.entries[room]!, now: now()))
        }
        if element.name == "message", element[attribute: "type"] == "groupchat" {
            return .session([.ignored("groupchat message from \(element[attribute: "from"] ?? "nobody"), no room we are in")])
        }
        switch catchUp.read(element) {
        case .emit(let message): return .session([.emitMessage(message, carbon: nil)])
        case .skipped: return .session([])
        case .forged(let reason): return .session([.ignored(reason)])
        case nil: break
        }
        var actions = machine.received(element)
        for index in actions.indices {
            guard case .emitMessage(var message, nil) = actions[index] else { continue }
            catchUp.tag(&message, ownJID: machine.ownJID)
            actions[index] = .emitMessage(message, carbon: nil)
        }
        return .session(actions)
    }
}
