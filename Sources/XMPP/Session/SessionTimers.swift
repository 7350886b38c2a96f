/// The session's timers while a connection is up: one deadline per ``Kind``, woken by one
/// wake-up at the earliest (``XMPPSession/startTimers()``): the clock's callback
/// (``CallbackClock``), or else one sleeping task, instead of a task per timer.
///
/// It does no I/O and reads no clock: the owner arms and cancels deadlines, asks
/// ``takeDue(now:)`` what fired when woken, and learns from ``arm(_:at:)`` when the
/// wake-up must be replaced because an earlier deadline came in. It holds the wake-up's
/// handle (``wake``) for the owner, who starts and cancels it.
struct SessionTimers<Instant: InstantProtocol & Sendable>: Sendable {
    enum Kind: Hashable, Sendable, CaseIterable {
        /// Our `<a/>` held back to answer a burst at once (XEP-0198 §4).
        case acknowledgement
        /// One `<r/>` for everything written since the last (XEP-0198 §4).
        case acknowledgementRequest
        /// The server owes an `<a/>` (``AcknowledgementWatchdog``).
        case watchdog
        /// The earliest IQ request deadline (RFC 6120 §8.2.3).
        case requestExpiry
        /// The earliest deadline of any room (XEP-0045 joins, self-pings, reflections).
        case rooms
        /// The keepalive's next ping or give-up (``SessionKeepalive``).
        case keepalive
    }

    private var deadlines: [Kind: Instant] = [:]
    /// The deadline the wake-up is set for (nil: none is).
    private(set) var wakeAt: Instant?
    /// The wake-up set for ``wakeAt``: held here so that arming an earlier deadline
    /// can cancel it; starting and cancelling it are the owner's.
    var wake: Wake?
    /// Counts the wake-ups set: one that comes after it was replaced finds its number stale.
    private(set) var wakeNumber = 0

    /// How the timers are woken: the clock's callback, or a task asleep on the clock.
    enum Wake: Sendable {
        case callback(ScheduledCallback)
        case sleepingTask(Task<Void, Never>)

        /// The wake-up will not come (unless it is coming already: its number is then stale).
        func cancel() {
            switch self {
            case .callback(let scheduled): scheduled.cancel()
            case .sleepingTask(let task): task.cancel()
            }
        }
    }
    /// Whether the timers run: from the start of the connection's task group to its end.
    var running = false

    var isEmpty: Bool { self.deadlines.isEmpty }

    /// The earliest armed deadline.
    var earliest: Instant? { self.deadlines.values.min() }

    func deadline(of timer: Kind) -> Instant? { self.deadlines[timer] }

    /// Arms `timer` for `deadline` (replacing its earlier one); true when no wake-up is set or
    /// the one that is comes later: it must be replaced.
    mutating func arm(_ timer: Kind, at deadline: Instant) -> Bool {
        self.deadlines[timer] = deadline
        guard let wakeAt = self.wakeAt else { return true }
        return deadline < wakeAt
    }

    /// Disarms `timer`. The wake-up is not replaced: when it comes it finds nothing due and
    /// the next is set for the next earliest.
    mutating func cancel(_ timer: Kind) {
        self.deadlines[timer] = nil
    }

    /// A wake-up is set for `deadline` now (nil: none is); returns its number.
    @discardableResult
    mutating func setWake(at deadline: Instant?) -> Int {
        self.wakeAt = deadline
        self.wakeNumber += 1
        return self.wakeNumber
    }

    /// The timers due at `now`, earliest first (equal deadlines in ``Kind``'s order); they
    /// are disarmed.
    mutating func takeDue(now: Instant) -> [Kind] {
        var due: [(timer: Kind, deadline: Instant)] = []
        for timer in Kind.allCases {
            if let deadline = self.deadlines[timer], deadline <= now { due.append((timer, deadline)) }
        }
        for entry in due { self.deadlines[entry.timer] = nil }
        // Stable: equal deadlines keep the cases' order.
        return due.enumerated().sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }.map { $0.element.timer }
    }

    /// The connection ended: no timer runs without one.
    mutating func removeAll() {
        self.deadlines.removeAll()
        self.wakeAt = nil
    }
}
