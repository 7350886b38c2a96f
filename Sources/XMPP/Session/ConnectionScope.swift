/// What lives as long as one connection of the session (RFC 6120 §4): the connection, its
/// timers (``SessionTimers``), the IQ requests waiting for their answers (RFC 6120 §8.2.3,
/// by id; the session machine tracks who may answer), the keepalive
/// (``KeepaliveStateMachine``, XEP-0199), and the queue of work run beside its read loop.
/// The scope is reset for each connection: its timers and requests end with the last one.
struct ConnectionScope<Instant: InstantProtocol & Sendable> where Instant.Duration == Duration {
    var connection: XMPPConnection?
    var timers = SessionTimers<Instant>()
    var requests = PendingRequests()
    var keepalive: KeepaliveStateMachine<Instant>
    /// Requests the connection makes beside its read loop, which their answers come through
    /// (a keepalive ping, a room's self-ping), run in its task group.
    var work: AsyncStream<@Sendable () async -> Void>.Continuation?

    init(keepalive: KeepaliveStateMachine<Instant>) {
        self.keepalive = keepalive
    }
}
