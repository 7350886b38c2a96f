/// The latest available presence of every contact resource (RFC 6121 §4), and the
/// aggregated presence of each bare JID.
///
/// Every available presence is kept per full JID (or per bare JID, for entities that
/// send presence without a resource) until an unavailable presence removes it. The
/// best resource of a bare JID is the one with the highest priority; ties go to the
/// most available `show` (chat, then plain available, away, xa, dnd) and then to
/// the most recently updated resource.
///
/// Resources with a negative priority are available and are tracked and considered
/// by ``best(for:)`` like any other, but a server never delivers messages sent to the
/// bare JID to them (RFC 6121 §8.5.2.1.1); a router choosing where a message will
/// land must check the priority itself.
public struct PresenceBook: Sendable {
    /// The aggregated presence of one bare JID after an update.
    public struct Change: Hashable, Sendable {
        /// The contact whose presence was updated.
        public var bare: JID
        /// Its best available resource now, or `nil` when it has none left.
        public var best: Presence?
        /// Whether `best` differs from the best presence before the update.
        public var changed: Bool

        public init(bare: JID, best: Presence?, changed: Bool) {
            self.bare = bare
            self.best = best
            self.changed = changed
        }
    }

    private struct Entry: Sendable {
        var presence: Presence
        /// When the presence arrived, counted in updates; larger is newer.
        var sequence: UInt64
    }

    /// bare JID → sender JID (full, or the bare JID itself) → latest presence.
    private var entries: [JID: [JID: Entry]]

    /// How many full JIDs are tracked; kept as presences come and go (a presence flood
    /// must not cost a walk over every contact per stanza).
    public private(set) var trackedCount: Int
    private var sequence: UInt64

    public init() {
        self.entries = [:]
        self.sequence = 0
        self.trackedCount = 0
    }

    /// Whether a presence from exactly `from` is tracked.
    public func isTracking(_ from: JID) -> Bool {
        self.entries[from.bare]?[from] != nil
    }

    /// Records a presence received from a contact (RFC 6121 §4.2–§4.5).
    ///
    /// An available presence replaces the sender's previous one. An unavailable
    /// presence from a full JID removes that resource; from a bare JID it removes
    /// every resource. Presences without `from` and those of other types
    /// (subscription management, probes, errors) change nothing and return `nil`.
    public mutating func update(_ presence: Presence) -> Change? {
        guard let from = presence.from else { return nil }
        let bare = from.bare
        let before = self.best(for: bare)
        switch presence.type {
        case .available:
            self.sequence &+= 1
            let replaced = self.entries[bare, default: [:]].updateValue(Entry(presence: presence, sequence: self.sequence), forKey: from)
            if replaced == nil { self.trackedCount += 1 }
        case .unavailable:
            if from.isBare {
                self.trackedCount -= self.entries.removeValue(forKey: bare)?.count ?? 0
            } else {
                if self.entries[bare]?.removeValue(forKey: from) != nil { self.trackedCount -= 1 }
                if self.entries[bare]?.isEmpty == true { self.entries[bare] = nil }
            }
        case .subscribe, .subscribed, .unsubscribe, .unsubscribed, .probe, .error:
            return nil
        }
        let after = self.best(for: bare)
        return Change(bare: bare, best: after, changed: after != before)
    }

    /// The best available presence of `bare` (see the type's documentation), or `nil`
    /// when none of its resources is available.
    public func best(for bare: JID) -> Presence? {
        self.rankedEntries(of: bare).first?.presence
    }

    /// Every available presence of `bare`, best first.
    public func resources(of bare: JID) -> [Presence] {
        self.rankedEntries(of: bare).map(\.presence)
    }

    /// Every bare JID with at least one available resource.
    public var availableContacts: [JID] {
        Array(self.entries.keys)
    }

    private func rankedEntries(of bare: JID) -> [Entry] {
        guard let resources = self.entries[bare.bare] else { return [] }
        return resources.values.sorted(by: Self.ranksHigher)
    }

    private static func ranksHigher(_ lhs: Entry, _ rhs: Entry) -> Bool {
        if lhs.presence.priority != rhs.presence.priority {
            return lhs.presence.priority > rhs.presence.priority
        }
        let lhsShow = Self.availability(lhs.presence.show)
        let rhsShow = Self.availability(rhs.presence.show)
        if lhsShow != rhsShow { return lhsShow < rhsShow }
        return lhs.sequence > rhs.sequence
    }

    /// RFC 6121 §4.7.2.1 order from most to least available; `nil` is plain available.
    private static func availability(_ show: Presence.Show?) -> Int {
        switch show {
        case .chat: 0
        case nil: 1
        case .away: 2
        case .xa: 3
        case .dnd: 4
        }
    }
}
