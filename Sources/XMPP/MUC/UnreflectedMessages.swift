import Foundation

/// Batches said in rooms that the server acknowledged (XEP-0198 §4) and the rooms have not
/// reflected yet (XEP-0045 §7.2.2, our origin-id, XEP-0359): a message said in a room is
/// delivered once the room reflects it, since a server may acknowledge a stanza before the
/// room has taken it (ejabberd hands it to the room's process, whose queue a crash loses).
/// Pure bookkeeping: the session completes the senders of what this hands back.
struct UnreflectedMessages<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// An acknowledged batch waiting for the room to reflect `remaining`.
    struct Entry: Sendable {
        var batch: InDoubtMessages.Batch
        var sentAt: Date?
        var remaining: Set<String>
        /// Past this it counts as delivered (``RoomTimings/reflectionTimeout``).
        var deadline: Instant
    }

    /// By room, oldest first.
    private(set) var entries: [JID: [Entry]] = [:]

    var isEmpty: Bool { self.entries.isEmpty }

    /// The earliest deadline (deadlines only grow within a room: each is a fixed time after
    /// its acknowledgement).
    var nextDeadline: Instant? { self.entries.values.compactMap(\.first?.deadline).min() }

    /// The server acknowledged `batch`, said in its room: false when the room has settled
    /// every message of it already (reflected, or answered with an error; its sender is
    /// done), else it waits here until `deadline`.
    mutating func acknowledged(_ batch: InDoubtMessages.Batch, sentAt: Date?, settled: (String) -> Bool, deadline: Instant) -> Bool {
        guard let room = batch.room else { return false }
        let remaining = Set(batch.messages.compactMap { $0[attribute: "id"] }.filter { !settled($0) })
        guard !remaining.isEmpty else { return false }
        self.entries[room, default: []].append(Entry(batch: batch, sentAt: sentAt, remaining: remaining, deadline: deadline))
        return true
    }

    /// `room` reflected our message `id`, or answered it with an error (then the bounce
    /// decides, as for any delivery the server took): the batch it completes, if any.
    mutating func arrived(_ id: String, in room: JID) -> InDoubtMessages.Batch? {
        guard let index = self.entries[room]?.firstIndex(where: { $0.remaining.contains(id) }) else { return nil }
        self.entries[room]?[index].remaining.remove(id)
        guard self.entries[room]?[index].remaining.isEmpty == true, let done = self.entries[room]?.remove(at: index) else { return nil }
        if self.entries[room]?.isEmpty == true { self.entries[room] = nil }
        return done.batch
    }

    /// What waited past its deadline (a room that does not reflect): counted delivered at
    /// the acknowledgement.
    mutating func expired(now: Instant) -> [Entry] {
        var expired: [Entry] = []
        for room in Array(self.entries.keys) {
            while let first = self.entries[room]?.first, first.deadline <= now {
                expired.append(first)
                self.entries[room]?.removeFirst()
            }
            if self.entries[room]?.isEmpty == true { self.entries[room] = nil }
        }
        return expired
    }

    /// Everything (the session that would carry the reflections is gone) as in-doubt
    /// messages, room by room, oldest first.
    mutating func takeAll() -> InDoubtMessages {
        var doubt = InDoubtMessages()
        for room in self.entries.keys.sorted(by: { $0.description < $1.description }) {
            for entry in self.entries[room] ?? [] {
                doubt.batches.append(entry.batch)
                if let sentAt = entry.sentAt { doubt.sentSince = doubt.sentSince.map { min($0, sentAt) } ?? sentAt }
            }
        }
        self.entries = [:]
        return doubt
    }

    /// What waits in `room`, taken out.
    mutating func take(in room: JID) -> [InDoubtMessages.Batch] {
        self.takeDoubt(in: room).batches
    }

    /// What waits in `room`, taken out as in-doubt messages (we left the room before
    /// their reflections), oldest first.
    mutating func takeDoubt(in room: JID) -> InDoubtMessages {
        var doubt = InDoubtMessages()
        for entry in self.entries[room] ?? [] {
            doubt.batches.append(entry.batch)
            if let sentAt = entry.sentAt { doubt.sentSince = doubt.sentSince.map { min($0, sentAt) } ?? sentAt }
        }
        self.entries[room] = nil
        return doubt
    }

    /// The connection is back (resumed): no reflection could come while it was down, so
    /// every wait starts again, ending at `deadline`.
    mutating func restartDeadlines(at deadline: Instant) {
        for room in Array(self.entries.keys) {
            for index in self.entries[room]?.indices ?? 0..<0 { self.entries[room]?[index].deadline = deadline }
        }
    }
}
