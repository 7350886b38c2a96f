/// Finds a dead link while the server owes acknowledgements (XEP-0198 §4): from the moment
/// an `<r/>` goes out with none unanswered, and again from every `<a/>` that leaves some
/// unanswered, the server's next `<a/>` must come within `timeout`; otherwise the
/// connection is dead, however much still arrives on it. Only requests count: a server
/// owes no `<a/>` for stanzas nobody asked about. An idle link is the keepalive's
/// (``KeepaliveStateMachine``).
///
/// A resumed stream (§5) must prove it is read: the session asks with `<r/>` at once, and
/// until the first `<a/>` the stream counts as unacknowledged. A resumed stream that answers
/// nothing is not resumed again: Prosody 0.12 feeds a resumed connection's input to the
/// old connection's XML parser, and when that connection was cut inside a stanza
/// everything sent afterwards becomes part of that stanza, on this connection and on the
/// next resumption alike.
///
/// Pure: the session reports sends and acknowledgements with the time, arms one timer for
/// ``deadline``, and asks ``check(now:)`` when it fires.
public struct AcknowledgementWatchdog<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What a timer firing means.
    public enum Verdict: Hashable, Sendable {
        /// Nothing is owed: no timer needed.
        case idle
        /// Owed, not yet late: fire again then.
        case wait(until: Instant)
        /// No `<a/>` in time: drop the connection. `resumedUnacknowledged`: the stream was
        /// resumed and never answered; start a new session instead of resuming it again.
        case dead(resumedUnacknowledged: Bool)
    }

    public let timeout: Duration
    /// Since when an `<a/>` is owed; nil: none is.
    public private(set) var owedSince: Instant?
    /// The stream was resumed and no `<a/>` has come since.
    public private(set) var resumedUnacknowledged = false
    /// `<r/>`s sent and not yet answered (each `<a/>` answers one; an unrequested one
    /// only makes this smaller, so the watchdog can miss a death, never invent one).
    public private(set) var unanswered = 0

    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// When the timer should fire; nil when nothing is owed.
    public var deadline: Instant? {
        self.owedSince.map { $0.advanced(by: self.timeout) }
    }

    /// An `<r/>` went out: if nothing was owed, an answer is owed from now. Returns true
    /// when this started a wait (the owner arms its timer).
    @discardableResult
    public mutating func requested(now: @autoclosure () -> Instant) -> Bool {
        self.unanswered += 1
        guard self.owedSince == nil else { return false }
        self.owedSince = now()
        return true
    }

    /// An `<a/>` arrived: it answers one request; the next is owed from now if any remain.
    public mutating func acknowledged(now: @autoclosure () -> Instant) {
        self.resumedUnacknowledged = false
        self.unanswered = max(0, self.unanswered - 1)
        self.owedSince = self.unanswered > 0 ? now() : nil
    }

    /// The stream was resumed (`<resumed/>`): it is unacknowledged until an `<a/>` answers
    /// the `<r/>` the owner sends next, with what it sends again.
    public mutating func resumed() {
        self.resumedUnacknowledged = true
    }

    /// The connection ended: nothing is owed on it any more.
    public mutating func connectionEnded() {
        self.owedSince = nil
        self.unanswered = 0
        self.resumedUnacknowledged = false
    }

    /// What the timer firing at `now` means.
    public func check(now: Instant) -> Verdict {
        guard let deadline = self.deadline else { return .idle }
        guard now >= deadline else { return .wait(until: deadline) }
        return .dead(resumedUnacknowledged: self.resumedUnacknowledged)
    }
}
