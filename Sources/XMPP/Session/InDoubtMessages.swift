import Foundation

/// Messages written on a stream whose session the server then lost before acknowledging
/// them (XEP-0198 §5 `<failed/>`): they may or may not have reached it. The next stream
/// looks them up in the account's archive (``ArchiveCheckStateMachine``) and sends again
/// only those not found, so the senders waiting on them see one outcome.
struct InDoubtMessages: Sendable {
    /// One sender's batch, still waiting for its confirmation.
    struct Batch: Sendable {
        var messages: [XMLElement]
        var waiter: OneShotWaiter<Void>
    }

    var batches: [Batch] = []
    /// Ids only: a session stored by an earlier process had these in flight; its owner
    /// sends again whatever the archive does not have.
    var restoredIDs: [String] = []
    /// When the oldest of them was sent, if known.
    var sentSince: Date?

    var isEmpty: Bool { self.batches.isEmpty && self.restoredIDs.isEmpty }

    /// The ids to look for (message id, which is also the origin-id).
    var ids: Set<String> {
        var ids = Set(self.restoredIDs)
        for batch in self.batches {
            for message in batch.messages {
                if let id = message[attribute: "id"] { ids.insert(id) }
            }
        }
        return ids
    }

    /// Adds what another lost stream left in doubt (older first).
    mutating func merge(_ newer: InDoubtMessages) {
        self.batches += newer.batches
        self.restoredIDs += newer.restoredIDs
        self.sentSince = [self.sentSince, newer.sentSince].compactMap { $0 }.min()
    }

    /// Splits the unacknowledged stanzas (numbered `acknowledged + 1` on, in order) among
    /// the senders waiting on them. `waiters` are in sending order; a waiter without a
    /// send time waits for "everything so far" and has no batch of its own. Returns the
    /// batches and the waiters that cannot be settled by the archive (rooms, whose copies
    /// are not in the account's archive, and plain waits): these fail, and their senders
    /// try again.
    static func split(
        pending: [XMLElement], acknowledged: UInt32, waiters: [(number: UInt32, waiter: OneShotWaiter<Void>, sentAt: Date?)]
    ) -> (InDoubtMessages, unsettled: [OneShotWaiter<Void>]) {
        var doubt = InDoubtMessages()
        var unsettled: [OneShotWaiter<Void>] = []
        var remaining = waiters[...]
        var current: [XMLElement] = []
        var number = acknowledged
        for element in pending {
            number &+= 1
            if element.name == "message", element.namespace == XMPPNamespace.client { current.append(element) }
            while let next = remaining.first, next.number == number {
                remaining.removeFirst()
                let messages = current
                current = []
                guard let sentAt = next.sentAt, !messages.contains(where: { $0[attribute: "type"] == "groupchat" }) else {
                    unsettled.append(next.waiter)
                    continue
                }
                doubt.batches.append(Batch(messages: messages, waiter: next.waiter))
                doubt.sentSince = doubt.sentSince.map { min($0, sentAt) } ?? sentAt
            }
        }
        unsettled += remaining.map(\.waiter)
        return (doubt, unsettled)
    }
}
