import BridgeState

/// The pipeline's first stage (issue 40): what it has seen already, so nothing is relayed
/// twice. Three memories, each bounded:
/// - each source's deduplication keys (``InboundMessage/deduplicationKey``), mirrored in
///   the journal (`seen` entries, trimmed to the newest ``window``);
/// - the relay ids this process gave its copies lately, so an echo of one is known without
///   reading the id map;
/// - the receipts passed back to a source lately, so each goes back once (issue 12).
///
/// A value type without I/O: the pipeline asks it and commits the entries it returns. As
/// the path's first ``RelayStage`` it stops a message whose key was handled; the echo
/// check (``echo(_:)``) may need the id map, which the pipeline reads.
package struct RepeatCheck: RelayStage, Sendable {
    /// Keys remembered per source (10,000 unless given): a message handed over again after
    /// more than this many newer ones would be relayed again.
    package let window: Int
    /// Every relay id this bridge gives starts with it: only such ids can be echoes.
    private let relayIDPrefix: String
    private var keys: [String: (recent: RecentIDs, sinceTrim: Int)] = [:]
    private var relayIDs: RecentIDs
    private var passedBack: RecentIDs

    package init(window: Int = 10_000, relayIDPrefix: String = "", relayIDs: Int = 100_000, passedBack: Int = 10_000) {
        self.window = window
        self.relayIDPrefix = relayIDPrefix
        self.relayIDs = RecentIDs(capacity: relayIDs)
        self.passedBack = RecentIDs(capacity: passedBack)
    }

    /// `source`'s keys as stored (at start, or when this instance takes a transport over),
    /// oldest first; replaces what was remembered for it.
    package mutating func restore(_ stored: [String], for source: String) {
        var recent = RecentIDs(capacity: self.window)
        for key in stored { recent.insert(key) }
        self.keys[source] = (recent, 0)
    }

    /// Whether a message with `key` from `source` was handled already.
    package func handled(_ key: String, from source: String) -> Bool {
        self.keys[source]?.recent.contains(key) == true
    }

    /// Remembers `key` as handled; the journal entries that make it durable (and, every
    /// ``window`` keys, forget the oldest).
    package mutating func remember(_ key: String, from source: String) -> [JournalEntry] {
        // Changed in place: a copy out of the dictionary would copy the whole set each time.
        self.keys[source, default: (RecentIDs(capacity: self.window), 0)].recent.insert(key)
        self.keys[source, default: (RecentIDs(capacity: self.window), 0)].sinceTrim += 1
        var entries: [JournalEntry] = [.seen(transport: source, deduplicationKey: key)]
        if let count = self.keys[source]?.sinceTrim, count >= self.window {
            entries.append(.trimSeen(transport: source, keep: self.window))
            self.keys[source]?.sinceTrim = 0
        }
        return entries
    }

    /// `key` was not handled after all (its deliveries could not be queued): a retry is new.
    package mutating func forget(_ key: String, from source: String) {
        self.keys[source]?.recent.remove(key)
    }

    /// Forgets everything of `source` (its transport handed to another instance).
    package mutating func forget(source: String) {
        self.keys.removeValue(forKey: source)
    }

    /// A copy was given `relayID`.
    package mutating func relayed(_ relayID: String) {
        self.relayIDs.insert(relayID)
    }

    /// Whether a message with `id` is an echo of a copy this bridge sent, as far as memory
    /// knows: true for a relay id given lately, false for an id that is none of ours, nil
    /// for one of ours from before (the id map knows).
    package func echo(_ id: String) -> Bool? {
        guard id.hasPrefix(self.relayIDPrefix) else { return false }
        return self.relayIDs.contains(id) ? true : nil
    }

    /// Stops a message whose deduplication key its source handed over before; remembers a
    /// new one in the commit.
    package mutating func run(_ work: inout RelayWork) -> StageOutcome {
        guard let key = work.message.deduplicationKey else { return .next }
        let source = work.message.source.transport
        if self.handled(key, from: source) { return .stop(.alreadyHandled) }
        work.bookkeeping += self.remember(key, from: source)
        return .next
    }

    /// Whether the receipt known by `key` goes back now: true the first time only.
    package mutating func passBack(_ key: String) -> Bool {
        guard !self.passedBack.contains(key) else { return false }
        self.passedBack.insert(key)
        return true
    }
}
