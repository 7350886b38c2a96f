import Foundation

/// Messages written on a stream whose session the server then lost before acknowledging
/// them (XEP-0198 §5 `<failed/>`): they may or may not have reached it. The next stream
/// looks them up (``ArchiveCheckStateMachine``: a message to a contact in the account's
/// archive, one into a room in the room's, unless the room reflected it already) and sends
/// again only those not found, so the senders waiting on them see one outcome.
struct InDoubtMessages: Sendable {
    /// One sender's batch, still waiting for its acknowledgement.
    struct Batch: Sendable {
        var messages: [XMLElement]
        var waiter: OneShotWaiter<Void>
        /// The room (bare JID) the batch was said in; nil for messages to contacts.
        var room: JID?
    }

    var batches: [Batch] = []
    /// Ids only: a session stored by an earlier process had these in flight; its owner
    /// sends again whatever the archive does not have.
    var restoredIDs: [String] = []
    /// When the oldest of them was sent, if known.
    var sentSince: Date?
    /// Every stream they were lost with was ended by the server itself
    /// (``XMPPClientError/serverEndedStream``): it was alive then and had finished with
    /// each of them it read, so each one its archive holds was also routed.
    var serverEndedStream = false
    /// The stream management session they were written on, when a later stream may resume
    /// it (an earlier owner's, inherited): a resumption of it proves the server kept it, so
    /// did not restart, since they were written.
    var sessionID: String?
    /// They were written on a session the server then resumed with an `h` that did not
    /// count them (XEP-0198 §5): on a server that may route them all the same
    /// (not ``ArchiveCheckStateMachine/handlesOneStanzaAtATime(software:)``) they are
    /// looked up after ``ArchiveCheckStateMachine/Configuration/uncountedSettleDelay``;
    /// on one whose count is exact they go again at once, unchecked.
    var uncountedAtResume = false

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

    /// The ids to look for in each archive: the account's own (nil; with the restored
    /// ids) and each room's, by the room's bare JID.
    var idsByArchive: [JID?: Set<String>] {
        var ids: [JID?: Set<String>] = [:]
        if !self.restoredIDs.isEmpty { ids[nil] = Set(self.restoredIDs) }
        for batch in self.batches {
            for message in batch.messages {
                if let id = message[attribute: "id"] { ids[batch.room, default: []].insert(id) }
            }
        }
        return ids
    }

    /// What the archive check decided, per sender: `settled` batches reached the server
    /// (their senders are told so); `resend` are the batches' messages the archive does
    /// not have, to send again in order, each with its sender.
    func settle(archived: Set<String>) -> (settled: [OneShotWaiter<Void>], resend: [Batch]) {
        var settled: [OneShotWaiter<Void>] = []
        var resend: [Batch] = []
        for batch in self.batches {
            let missing = batch.messages.filter { !archived.contains($0[attribute: "id"] ?? "") }
            if missing.isEmpty {
                settled.append(batch.waiter)
            } else {
                resend.append(Batch(messages: missing, waiter: batch.waiter, room: batch.room))
            }
        }
        return (settled, resend)
    }

    /// Adds what another lost stream left in doubt (older first).
    mutating func merge(_ newer: InDoubtMessages) {
        self.serverEndedStream = self.isEmpty ? newer.serverEndedStream : self.serverEndedStream && (newer.isEmpty || newer.serverEndedStream)
        self.sessionID = self.isEmpty ? newer.sessionID : (newer.isEmpty || newer.sessionID == self.sessionID ? self.sessionID : nil)
        self.uncountedAtResume = self.isEmpty ? newer.uncountedAtResume : self.uncountedAtResume && (newer.isEmpty || newer.uncountedAtResume)
        self.batches += newer.batches
        self.restoredIDs += newer.restoredIDs
        self.sentSince = [self.sentSince, newer.sentSince].compactMap { $0 }.min()
    }

    /// Splits the unacknowledged stanzas (numbered `acknowledged + 1` on, in order) among
    /// the senders waiting on them: each batch is the `count` stanzas ending at its
    /// waiter's number, so messages sent by others in between (receipts, chat states) are
    /// not its. A waiter without a send time waits for "everything so far" and has no batch
    /// of its own. Returns the batches and the waiters that cannot be settled by the
    /// archive (plain waits; numbers outside what is pending; batches that mix targets):
    /// these fail, and their senders try again. A batch said in a room is looked up in that
    /// room's archive, whole.
    static func split(
        pending: [XMLElement], acknowledged: UInt32, waiters: [AcknowledgementWaiter]
    ) -> (InDoubtMessages, unsettled: [OneShotWaiter<Void>]) {
        var doubt = InDoubtMessages()
        var unsettled: [OneShotWaiter<Void>] = []
        for entry in waiters {
            // Its stanzas' places in `pending` (numbers wrap modulo 2³²); the server may
            // have acknowledged the first of them already.
            let end = Int(entry.number &- acknowledged)
            let start = max(0, end - entry.count)
            guard let sentAt = entry.sentAt, entry.count > 0, end > 0, end <= pending.count else {
                unsettled.append(entry.waiter)
                continue
            }
            // Into a room, the whole batch: what the server acknowledged of it is not said
            // in the room until reflected (XEP-0045 §7.2.2; Prosody 0.12, stopping, counts
            // a message its room then refuses), so it is looked up there too.
            let numbered = entry.room != nil && !entry.messages.isEmpty ? entry.messages[...] : pending[start..<end]
            let messages = numbered.filter { $0.name == "message" && $0.namespace == XMPPNamespace.client }
            // A batch goes to one target: all into one room, or none into any.
            let said = messages.filter { $0[attribute: "type"] == "groupchat" }
            let rooms = Set(said.map { $0[attribute: "to"].flatMap { try? JID($0).bare } })
            guard said.isEmpty || (said.count == messages.count && rooms.count == 1 && rooms.first! != nil) else {
                unsettled.append(entry.waiter)
                continue
            }
            doubt.batches.append(Batch(messages: messages, waiter: entry.waiter, room: rooms.first ?? nil))
            doubt.sentSince = doubt.sentSince.map { min($0, sentAt) } ?? sentAt
        }
        return (doubt, unsettled)
    }
}
