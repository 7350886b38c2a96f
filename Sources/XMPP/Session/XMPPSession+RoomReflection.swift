import Foundation

/// A message said in a room is delivered once the room reflects it to us (XEP-0045 §7.2.2),
/// recognised by our origin-id (XEP-0359), not once the server acknowledges it (XEP-0198
/// §4): ``UnreflectedMessages`` keeps acknowledged batches until then; a session lost
/// meanwhile puts them in doubt, looked for in the room's archive after the rejoin and said
/// again only where missing (``checkInDoubt(on:resumed:)``).
extension XMPPSession {
    /// `elements` as a batch said in one room we sit in (every one a groupchat message to
    /// the same room), else nil.
    func saidInRoom(_ elements: [XMLElement], waiter: OneShotWaiter<Void>) -> InDoubtMessages.Batch? {
        guard let first = elements.first, first[attribute: "type"] == "groupchat", let to = first[attribute: "to"],
            let room = try? JID(to).bare, self.rooms.entries[room] != nil,
            elements.allSatisfy({ $0[attribute: "type"] == "groupchat" && $0[attribute: "to"] == to })
        else { return nil }
        return InDoubtMessages.Batch(messages: elements, waiter: waiter, room: room)
    }

    /// The server acknowledged `batch` (said in a room, sent at `sentAt`): its sender is told
    /// once the room has reflected every message of it, at once if it already has.
    func parkUntilReflected(_ batch: InDoubtMessages.Batch, sentAt: Date?) {
        guard let room = batch.room, let machine = self.rooms.entries[room]?.machine,
            self.rooms.unreflected.acknowledged(
                batch, sentAt: sentAt, reflected: machine.reflected, deadline: self.clock.now.advanced(by: self.configuration.roomTimings.reflectionTimeout)
            )
        else {
            batch.waiter.complete(.success(()))
            return
        }
        self.armReflectionTimer()
    }

    /// The room reflected our message `id`, or answered it with an error.
    func reflectionArrived(_ id: String, in room: JID) {
        self.rooms.unreflected.arrived(id, in: room)?.waiter.complete(.success(()))
    }

    /// Fails the senders of what waits for a reflection in `room` (every room when nil):
    /// they try again, with the same ids (at least once).
    func failUnreflected(_ error: any Error, in room: JID? = nil) {
        for batch in self.rooms.unreflected.take(in: room) { batch.waiter.complete(.failure(error)) }
    }

    /// One timer, for the earliest deadline.
    private func armReflectionTimer() {
        guard self.rooms.reflectionTimer == nil, let next = self.rooms.unreflected.nextDeadline else { return }
        let clock = self.clock
        self.rooms.reflectionTimer = Task(executorPreference: self.executor) {
            guard (try? await clock.sleep(until: next, tolerance: nil)) != nil else { return }
            await self.reflectionTimerFired()
        }
    }

    /// A room that has not reflected an acknowledged message within
    /// ``RoomTimings/reflectionTimeout`` does not reflect, though XEP-0045 §7.2.2 says it
    /// must: the server's acknowledgement is all there is, so the batch counts as delivered.
    private func reflectionTimerFired() {
        self.rooms.reflectionTimer = nil
        for entry in self.rooms.unreflected.expired(now: self.clock.now) {
            self.logger.warning(
                "the room did not reflect messages we said in it; counted delivered at the server's acknowledgement",
                metadata: ["room": "\(entry.batch.room?.description ?? "-")", "messages": "\(entry.remaining.count)", "after": "\(self.configuration.roomTimings.reflectionTimeout)"]
            )
            entry.batch.waiter.complete(.success(()))
        }
        self.armReflectionTimer()
    }
}
