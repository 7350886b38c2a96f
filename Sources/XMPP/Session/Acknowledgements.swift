import Foundation

/// The session's part for the server's acknowledgements of what it wrote (XEP-0198 §4):
/// the senders waiting on them (``AcknowledgementWaiter``, by stanza number), the watchdog
/// on the server's answers (``AcknowledgementWatchdog``), and when a batch last carried our
/// `<r/>` (``AcknowledgementRequestPacer``). No I/O: the session completes the waiters.
struct Acknowledgements<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    private(set) var waiters: [AcknowledgementWaiter] = []
    /// Finds a server that stopped answering our `<r/>`.
    var watchdog: AcknowledgementWatchdog<Instant>
    /// When a batch last carried our `<r/>` (the timer for a later one waits longer then).
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

/// A sender waiting for the server to acknowledge stanza `number` (XEP-0198 §4): its batch
/// is the `count` stanzas ending there, written at `sentAt` (nil, count 0: a wait for
/// everything written so far).
struct AcknowledgementWaiter: Sendable {
    var number: UInt32
    var waiter: OneShotWaiter<Void>
    var sentAt: Date?
    var count: Int
    /// The room every message of the batch was said in, if so (with the messages): its
    /// sender then also waits for the room to reflect them
    /// (``SessionRooms/parkUntilReflected(_:sentAt:in:)``). A batch that mixes targets counts
    /// at the acknowledgement.
    var room: JID?
    var messages: [XMLElement] = []

    init(number: UInt32, waiter: OneShotWaiter<Void>, sentAt: Date?, count: Int, room: JID? = nil, messages: [XMLElement] = []) {
        self.number = number
        self.waiter = waiter
        self.sentAt = sentAt
        self.count = count
        self.room = room
        self.messages = room == nil ? [] : messages
    }
}
