import StanzaIdentity

/// Live messages that arrive while a catch-up from the account's own archive (XEP-0313
/// §4) is due or under way on a connection: held back and handed over after the archived
/// ones, so that no message overtakes older ones the archive still has to give.
///
/// A new session announces its presence before it queries the archive, and a server may
/// answer that presence with the messages it stored while no resource was available
/// (Prosody's offline storage): those are newer than what the catch-up brings. Messages
/// arriving live are archived in order, so holding them until the catch-up ends keeps the
/// archive's order (XEP-0313 §3.1).
///
/// A pure machine: the session begins the hold when a connection opens with a catch-up
/// due, offers each live message with its stanza-id, tells it which ids the catch-up
/// brought (their held copies are dropped: the archived copy went on in order), and, once
/// the catch-up ended, takes what is held batch by batch until a take finds nothing, which
/// ends the hold in the same step (so nothing offered meanwhile overtakes a batch being
/// handed over). A lost connection drops what is held: the messages are in the archive,
/// and the cursor has not passed them, so the next catch-up reads them (the session opens
/// the gap again when the catch-up had already ended).
struct LiveMessageHold<Held> {
    enum State {
        /// Live messages go on at once.
        case passing
        /// A catch-up is due or runs: live messages wait.
        case holding
        /// The catch-up ended; held messages are being handed over, and those that arrive
        /// meanwhile still wait behind them.
        case handingOver
    }

    /// What became of an offered message.
    enum Offer {
        /// Held, to be handed over by ``takeForHandOver()``.
        case held
        /// No hold: hand it over now.
        case passing
        /// The hold was full: hand over these (the held ones, oldest first, then the offered
        /// one) now; the hold has ended.
        case overflow([Held])
    }

    /// The most held at once; past it, everything held goes on in order and the hold ends
    /// (order against the rest of the catch-up is then no longer kept).
    let limit: Int
    private(set) var state = State.passing
    private(set) var held: [(key: StanzaID, item: Held)] = []
    /// The keys in ``held``, to tell quickly whether an archived message has a held copy.
    private var keys: Set<StanzaID> = []
    /// Since the hold began: how many were held, and how many of those the catch-up brought
    /// itself (for the log).
    private(set) var heldCount = 0
    private(set) var archivedCount = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var isHolding: Bool { self.state != .passing }

    /// A connection opened with a catch-up due: live messages wait from now on.
    mutating func begin() {
        self.clear()
        self.state = .holding
        self.heldCount = 0
        self.archivedCount = 0
    }

    /// Holds `item`, known by its stanza-id `key`, while holding.
    mutating func offer(_ item: Held, key: StanzaID) -> Offer {
        guard self.isHolding else { return .passing }
        // While a batch is handed over, what arrives waits behind it whatever the count:
        // going on now would overtake the batch (the hand-over drains at the consumer's pace).
        guard self.held.count < self.limit || self.state == .handingOver else {
            let all = self.held.map(\.item) + [item]
            self.clear()
            return .overflow(all)
        }
        self.held.append((key, item))
        self.keys.insert(key)
        self.heldCount += 1
        return .held
    }

    /// The catch-up brought the message with stanza-id `key`: a held copy of it is dropped.
    /// True when there was one.
    @discardableResult
    mutating func archived(key: StanzaID) -> Bool {
        guard self.keys.remove(key) != nil else { return false }
        self.held.removeAll { $0.key == key }
        self.archivedCount += 1
        return true
    }

    /// The catch-up ended (caught up, stopped, or no archive): the next batch to hand over,
    /// oldest first. An empty answer means nothing waits any more and the hold has ended;
    /// until then, messages offered meanwhile are held behind the batch.
    mutating func takeForHandOver() -> [Held] {
        guard self.isHolding, !self.held.isEmpty else {
            self.clear()
            return []
        }
        self.state = .handingOver
        defer {
            self.held = []
            self.keys = []
        }
        return self.held.map(\.item)
    }

    /// The connection ended before the hand-over did: the held messages are dropped, never
    /// handed over. Returns how many.
    @discardableResult
    mutating func connectionLost() -> Int {
        defer { self.clear() }
        return self.held.count
    }

    private mutating func clear() {
        self.state = .passing
        self.held = []
        self.keys = []
    }
}

extension LiveMessageHold: Sendable where Held: Sendable {}
