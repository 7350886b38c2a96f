/// What lives as long as one connection of the session (RFC 6120 §4): the connection, its
/// timers (``SessionTimers``), the IQ requests waiting for their answers (RFC 6120 §8.2.3,
/// by id; the session machine tracks who may answer), the keepalive
/// (``KeepaliveStateMachine``, XEP-0199), and the queue of work run beside its reading.
/// The scope is reset for each connection: its timers and requests end with the last one.
struct ConnectionScope<Instant: InstantProtocol & Sendable> where Instant.Duration == Duration {
    var connection: XMPPConnection?
    var timers = SessionTimers<Instant>()
    var requests = PendingRequests()
    var keepalive: KeepaliveStateMachine<Instant>
    /// Requests the connection makes beside its reading, which their answers come through
    /// (a keepalive ping, a room's self-ping), run in its task group.
    var work: AsyncStream<@Sendable () async -> Void>.Continuation?
    /// Whether the session reported this connection online (its restore's last step before
    /// "online"). New messages wait until then: before it, stream management may not be
    /// enabled yet (a message would go unnumbered, XEP-0198 §4) and what is sent again must
    /// go first (``SessionRestoreStateMachine``).
    var isOnline: Bool { self.onlineSince != nil }
    /// When the session reported it online (nil: not online).
    private(set) var onlineSince: Instant?
    /// Senders waiting for ``isOnline``, or for the connection's end.
    private var onlineWaiters: [OneShotWaiter<Void>] = []

    /// A waiter completed once the connection is online or gone.
    mutating func untilOnline() -> OneShotWaiter<Void> {
        let waiter = OneShotWaiter<Void>()
        self.onlineWaiters.append(waiter)
        return waiter
    }

    /// The session reported the connection online: waiting senders go on.
    mutating func reportedOnline(at now: Instant) {
        self.onlineSince = now
        self.releaseOnlineWaiters()
    }

    /// The connection is gone: waiting senders look again (and find no connection).
    mutating func wentOffline() {
        self.onlineSince = nil
        self.releaseOnlineWaiters()
    }

    private mutating func releaseOnlineWaiters() {
        let waiters = self.onlineWaiters
        self.onlineWaiters = []
        for waiter in waiters { waiter.complete(.success(())) }
    }

    init(keepalive: KeepaliveStateMachine<Instant>) {
        self.keepalive = keepalive
    }
}
