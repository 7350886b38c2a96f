/// The state of catching up from the account's own archive (XEP-0313 §4): the
/// ``ArchiveCatchUpStateMachine`` (nil when off) and the live messages held while a catch-up
/// is due or runs (``LiveMessageHold``). No I/O: ``SessionCatchUp``, which owns it, runs the
/// queries and hands messages over.
struct AccountCatchUp: Sendable {
    var machine: ArchiveCatchUpStateMachine?
    var liveHold: LiveMessageHold<Message>

    init(machine: ArchiveCatchUpStateMachine?, holdLimit: Int) {
        self.machine = machine
        self.liveHold = LiveMessageHold(limit: holdLimit)
    }

    /// What the catch-up made of a received message.
    enum Reading: Sendable {
        /// A result for the consumer, with its stanza-id and the cursor it reaches.
        case emit(Message)
        /// A result it read and keeps from the consumer (our own, no chat).
        case skipped
        /// A result from someone other than our archive.
        case forged(String)
    }

    /// Reads `element` as a result of the catch-up under way; nil when it is none.
    mutating func read(_ element: XMLElement) -> Reading? {
        guard element.name == "message", self.machine != nil else { return nil }
        switch self.machine?.received(element) {
        case .archived(var message, let cursor):
            if case .after(let id) = cursor {
                message.stanzaID = id
                // The catch-up brought it in order: a copy held live is not needed.
                self.liveHold.archived(key: id)
            }
            message.archiveCursor = cursor
            return .emit(message)
        case .skipped:
            // Not emitted from the archive: nor is a held copy, which would move the
            // cursor back to it.
            if let id = self.machine?.lastResult { self.liveHold.archived(key: id) }
            return .skipped
        case .forged(let reason):
            return .forged(reason)
        case .notAResult, nil:
            return nil
        }
    }

    /// A live message from our own account's stream: its stanza-id (XEP-0359
    /// by our account) and, unless it is held for the catch-up (it gets its cursor when
    /// handed over), the cursor it moves the archive to.
    mutating func tag(_ message: inout Message, ownJID: JID) {
        message.stanzaID = ArchiveCatchUpStateMachine.stanzaID(of: message, ownJID: ownJID)
        if !(self.liveHold.isHolding && Self.waitsForCatchUp(message, carbon: nil)) {
            message.archiveCursor = self.machine?.liveMessage(stanzaID: message.stanzaID)
        }
    }

    /// A new stream: a gap unless it `continuesLast`; live messages are held while the
    /// catch-up that fills it is due.
    mutating func streamStarted(continuesLast: Bool) {
        self.machine?.streamStarted(continuesLast: continuesLast)
        if self.machine?.emitsOnCatchUp == true { self.liveHold.begin() }
    }

    /// The connection ended: what was held is dropped (how many). Their numbers were
    /// handled, so a gap is opened again for the next catch-up to read them.
    mutating func connectionLost() -> Int {
        let dropped = self.liveHold.connectionLost()
        if dropped > 0 { self.machine?.reopenGap() }
        return dropped
    }

    /// Whether `message` waits while a catch-up is due: a live 1:1 message in our archive
    /// (archived results carry their cursor; room messages have a catch-up of their own).
    static func waitsForCatchUp(_ message: Message, carbon: CarbonDirection?) -> Bool {
        carbon == nil && message.archiveCursor == nil && message.stanzaID != nil && message.type != .groupchat
    }
}
