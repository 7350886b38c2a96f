/// The session's part for the server's acknowledgements of what it wrote (XEP-0198 §4):
/// the senders waiting on them (``AcknowledgementWaiter``, by stanza number), the watchdog
/// on the server's answers (``AcknowledgementWatchdog``), and when a batch last carried our
/// `<r/>` (``AcknowledgementRequestPacer``). No I/O: the session completes the waiters.
struct Acknowledgements<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    private(set) var waiters: [AcknowledgementWaiter] = []
    var watchdog: AcknowledgementWatchdog<Instant>
    var lastCarriedRequest: Instant?
    /// The stream management session came from storage (an earlier process): its
    /// unacknowledged stanzas are ids only, never sent again by the session.
    var restoredSession = false

    init(timeout: Duration) {
        self.watchdog = AcknowledgementWatchdog(timeout: timeout)
    }

    var isEmpty: Bool { self.waiters.isEmpty }
    var count: Int { self.waiters.count }

    /// A sender waits for the acknowledgement of the stanza numbered `entry.number`.
    mutating func wait(_ entry: AcknowledgementWaiter) {
        self.waiters.append(entry)
    }

    /// Takes out, in order, the waiters the server's count `through` covers (numbers wrap
    /// modulo 2³²: covered when no further ahead of it than 0).
    mutating func covered(through: UInt32) -> [AcknowledgementWaiter] {
        var covered: [AcknowledgementWaiter] = []
        var remaining: [AcknowledgementWaiter] = []
        for entry in self.waiters {
            if through &- entry.number < UInt32(1) << 31 { covered.append(entry) } else { remaining.append(entry) }
        }
        self.waiters = remaining
        return covered
    }

    /// Takes out every waiter (the session is gone, or its stanzas are in doubt).
    mutating func takeAll() -> [AcknowledgementWaiter] {
        defer { self.waiters.removeAll() }
        return self.waiters
    }
}
