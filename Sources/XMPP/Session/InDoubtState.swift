/// The session's part for its lost streams (XEP-0198 §5): the messages in doubt after them
/// (``InDoubtMessages``), when they were lost, and the archive checks under way
/// (``ArchiveCheckStateMachine``, XEP-0313), which read their results from the stream
/// before anything else does. No I/O: the session runs the checks.
struct InDoubtState<Instant: InstantProtocol & Sendable>: Sendable {
    /// Messages written on a stream whose session the server lost, to look up.
    var messages = InDoubtMessages()
    /// When the connection that put them in doubt was lost (kept until they are settled:
    /// a later loss must not make a server restart since look older than it is).
    var since: Instant?
    /// When the last connection was lost.
    var connectionLostAt: Instant?
    /// Whether the server ended the last connection's stream itself
    /// (``XMPPClientError/serverEndedStream``).
    var lastLossEndedByServer = false
    /// Archive checks under way, by their first query id: one room's may run beside
    /// another room's.
    private var running: [String: ArchiveCheckStateMachine] = [:]

    /// The loss a server restart is measured from: the one that put messages in doubt,
    /// else the last.
    var lossToCompare: Instant? { self.since ?? self.connectionLostAt }

    /// Keeps what was just put in doubt, with the loss it came from unless an older one
    /// is already kept.
    mutating func add(_ doubt: InDoubtMessages) {
        guard !doubt.isEmpty else { return }
        if self.since == nil { self.since = self.connectionLostAt }
        self.messages.merge(doubt)
    }

    /// Takes the messages in doubt out, to check them.
    mutating func take() -> InDoubtMessages {
        defer { self.messages = InDoubtMessages() }
        return self.messages
    }

    /// Puts `doubt` back ahead of what came since (its check was cut off by a lost
    /// connection: the next stream checks it first).
    mutating func putBack(_ doubt: InDoubtMessages) {
        var older = doubt
        older.merge(self.messages)
        self.messages = older
    }

    /// Everything in doubt was settled: the next loss starts the clock again.
    mutating func settledAll() {
        if self.messages.isEmpty { self.since = nil }
    }

    // MARK: - Checks under way

    /// A check started; `key` is its first query id.
    mutating func started(_ check: ArchiveCheckStateMachine, key: String) {
        self.running[key] = check
    }

    /// Feeds `update` to the check `key`; nil when it is no longer running.
    mutating func update<Result>(_ key: String, _ update: (inout ArchiveCheckStateMachine) -> Result) -> Result? {
        guard self.running[key] != nil else { return nil }
        return update(&self.running[key]!)
    }

    /// The check `key` ended: it is taken out, as it finished (nil when not running).
    mutating func finished(_ key: String) -> ArchiveCheckStateMachine? {
        self.running.removeValue(forKey: key)
    }

    /// Whether `element` is a result of a check under way (that check reads it).
    mutating func checkTook(_ element: XMLElement) -> Bool {
        guard !self.running.isEmpty else { return false }
        for key in Array(self.running.keys) where self.running[key]?.received(element) == true { return true }
        return false
    }
}
