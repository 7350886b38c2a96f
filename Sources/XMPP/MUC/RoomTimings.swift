/// When a room is pinged and rejoined (XEP-0410, XEP-0045 §7.2); the same for every room of
/// an account.
public struct RoomTimings: Hashable, Sendable {
    /// A room quiet this long gets a self-ping (XEP-0410 §3) to learn whether we are still in it.
    public var pingInterval: Duration
    /// How long a self-ping may go unanswered before we rejoin.
    public var pingTimeout: Duration
    /// After a kick (status 307), the wait before rejoining.
    public var rejoinAfterKick: Duration
    /// After a failed join or a removal for shutdown or technical reasons (332, 333), the
    /// first wait before trying again; it doubles up to `maximumRetryDelay`.
    public var retryDelay: Duration
    public var maximumRetryDelay: Duration
    /// Nicks tried after a conflict (the asked nick with `_` appended, then again…).
    public var nickAttempts: Int
    /// How long a message said in a room may wait for the room to reflect it (XEP-0045
    /// §7.2.2) once the server acknowledged it; past that it counts as delivered at the
    /// acknowledgement (a room that does not reflect), logged.
    public var reflectionTimeout: Duration

    public init(
        pingInterval: Duration = .seconds(300), pingTimeout: Duration = .seconds(30), rejoinAfterKick: Duration = .seconds(60),
        retryDelay: Duration = .seconds(5), maximumRetryDelay: Duration = .seconds(300), nickAttempts: Int = 5,
        reflectionTimeout: Duration = .seconds(10)
    ) {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.rejoinAfterKick = rejoinAfterKick
        self.retryDelay = retryDelay
        self.maximumRetryDelay = maximumRetryDelay
        self.nickAttempts = nickAttempts
        self.reflectionTimeout = reflectionTimeout
    }
}
