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
/// A pure value: the session begins the hold when a connection opens with a gap, offers
/// each live message, and releases them when its catch-up ends; a lost connection drops
/// them, unacknowledged (the server resends them on resumption, or the next catch-up reads
/// them from the archive).
struct LiveMessageHold<Held> {
    /// The most held at once; past it, everything held goes on in order and the hold ends
    /// (order against the rest of the catch-up is then no longer kept).
    let limit: Int
    private(set) var isHolding = false
    private(set) var held: [Held] = []

    /// What became of an offered message.
    enum Offer {
        /// Held, to be handed over by ``release()``.
        case held
        /// No hold: hand it over now.
        case notHolding
        /// The hold was full: hand over these (the held ones, oldest first, then the offered
        /// one) now; the hold has ended.
        case overflow([Held])
    }

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A connection opened with a catch-up due: live messages wait from now on.
    mutating func begin() {
        self.isHolding = true
    }

    /// Holds `item` while holding.
    mutating func offer(_ item: Held) -> Offer {
        guard self.isHolding else { return .notHolding }
        guard self.held.count < self.limit else {
            let all = self.held + [item]
            self.held = []
            self.isHolding = false
            return .overflow(all)
        }
        self.held.append(item)
        return .held
    }

    /// The catch-up ended (caught up, stopped, or no archive): what was held, oldest first,
    /// to hand over now; nothing waits any more.
    mutating func release() -> [Held] {
        defer {
            self.held = []
            self.isHolding = false
        }
        return self.held
    }

    /// The connection ended before the catch-up did: the held messages are dropped, never
    /// handed over or acknowledged. Returns how many.
    @discardableResult
    mutating func connectionLost() -> Int {
        defer {
            self.held = []
            self.isHolding = false
        }
        return self.held.count
    }
}

extension LiveMessageHold: Sendable where Held: Sendable {}
