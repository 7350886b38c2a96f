import Foundation

/// A message said in a room is delivered once the room reflects it to us (XEP-0045 §7.2.2),
/// recognised by our origin-id (XEP-0359), not once the server acknowledges it (XEP-0198
/// §4): ``UnreflectedMessages`` keeps acknowledged batches until then; a session lost
/// meanwhile puts them in doubt, looked for in the room's archive after the rejoin and said
/// again only where missing (``SessionArchiveCheck``).
extension SessionRooms {
    /// The room every one of `elements` is said in (groupchat messages to one room we sit
    /// in), else nil.
    func roomSaidIn(_ elements: [XMLElement]) -> JID? {
        guard !self.table.entries.isEmpty, let first = elements.first, first[attribute: "type"] == "groupchat", let to = first[attribute: "to"],
            let room = try? JID(to).bare, self.table.entries[room] != nil,
            elements.allSatisfy({ $0[attribute: "type"] == "groupchat" && $0[attribute: "to"] == to })
        else { return nil }
        return room
    }

    /// The server acknowledged `batch` (said in a room, sent at `sentAt`): its sender is told
    /// once the room has reflected every message of it (or answered it with an error), at
    /// once if it already has. Out of the room meanwhile, it is in doubt until the rejoin.
    func parkUntilReflected(_ batch: InDoubtMessages.Batch, sentAt: Date?, in session: isolated XMPPSession<C>) {
        guard let room = batch.room, let machine = self.table.entries[room]?.machine else {
            // The room was taken out of the configuration: nothing will be said there again.
            batch.waiter.complete(.success(()))
            return
        }
        guard machine.isJoined else {
            var doubt = InDoubtMessages()
            doubt.batches = [batch]
            doubt.sentSince = sentAt
            self.keepLeftUnreflected(doubt, room: room, in: session)
            return
        }
        let deadline = session.dependencies.clock.now.advanced(by: session.dependencies.configuration.roomTimings.reflectionTimeout)
        guard self.table.unreflected.acknowledged(batch, sentAt: sentAt, settled: machine.settled, deadline: deadline) else {
            batch.waiter.complete(.success(()))
            return
        }
        self.armTimer(in: session)
    }

    /// The room reflected our message `id`, or answered it with an error.
    func reflectionArrived(_ id: String, room: JID) {
        guard !self.table.unreflected.isEmpty else { return }
        self.table.unreflected.arrived(id, in: room)?.waiter.complete(.success(()))
    }

    /// We are out of `room` with the session alive (kicked, XEP-0045 §9.1; the room's service
    /// shutting down, status 332): what waits for its reflection there (§7.2.2) will not get
    /// it, and may or may not be in the room. It is looked up in the room's archive
    /// (XEP-0313) after the rejoin; without an archive check its senders send it again (at
    /// least once).
    func leftWithUnreflected(_ room: JID, in session: isolated XMPPSession<C>) {
        guard !self.table.unreflected.isEmpty else { return }
        self.keepLeftUnreflected(self.table.unreflected.takeDoubt(in: room), room: room, in: session)
    }

    /// Keeps `doubt`, said in `room`, for the archive check after the rejoin.
    private func keepLeftUnreflected(_ doubt: InDoubtMessages, room: JID, in session: isolated XMPPSession<C>) {
        guard !doubt.isEmpty else { return }
        guard session.dependencies.configuration.archiveCheck != nil, self.table.entries[room] != nil else {
            for batch in doubt.batches { batch.waiter.complete(.failure(XMPPSessionError.disconnected)) }
            return
        }
        self.table.entries[room]?.leftUnreflected.merge(doubt)
        session.dependencies.logger.info(
            "out of the room before it reflected messages we said; looked up in its archive after the rejoin",
            metadata: ["room": "\(room)", "messages": "\(doubt.batches.reduce(0) { $0 + $1.messages.count })"]
        )
    }

    /// Fails the senders of what waits for a reflection in every room: they send it again,
    /// with the same ids (at least once).
    func failUnreflected(_ error: any Error) {
        guard !self.table.unreflected.isEmpty else { return }
        for batch in self.table.unreflected.takeAll().batches { batch.waiter.complete(.failure(error)) }
    }

    /// A room that has not reflected an acknowledged message within
    /// ``RoomTimings/reflectionTimeout`` of the connection being up does not reflect, though
    /// XEP-0045 §7.2.2 says it must: the server's acknowledgement is all there is, so the
    /// batch counts as delivered. Runs from the room timer, which runs only while connected.
    func expireUnreflected(now: C.Instant, in session: isolated XMPPSession<C>) {
        for entry in self.table.unreflected.expired(now: now) {
            session.dependencies.logger.warning(
                "the room did not reflect messages we said in it; counted delivered at the server's acknowledgement",
                metadata: [
                    "room": "\(entry.batch.room?.description ?? "-")", "messages": "\(entry.remaining.count)",
                    "after": "\(session.dependencies.configuration.roomTimings.reflectionTimeout)",
                ]
            )
            entry.batch.waiter.complete(.success(()))
        }
    }
}
