import TransportCore

/// The settings of one HTTP ingress (`[local.NAME] kind = "http"`).
public struct HTTPIngressOptions: Sendable {
    public var listen: HTTPListenAddress
    /// Nil: no token asked for; allowed only on a loopback or Unix-socket listener.
    public var token: BearerToken?
    /// Largest request body taken; a larger one is answered 413.
    public var maxBodyBytes: Int
    /// Longest a `?wait=sent` request is held before it is answered with the status then.
    public var waitTimeout: Duration
    /// The name messages from this ingress carry (`{nick}` in a channel's format).
    public var nick: String
    /// The Unix socket's file mode.
    public var socketMode: UInt32
    /// Connections served at once; more wait in the listen backlog.
    public var maxConnections: Int
    /// A connection idle this long (no request, or a request that stalls) is closed.
    public var idleTimeout: Duration

    public init(
        listen: HTTPListenAddress, token: BearerToken?, maxBodyBytes: Int = 1 << 20, waitTimeout: Duration = .seconds(30), nick: String,
        socketMode: UInt32 = 0o600, maxConnections: Int = 256, idleTimeout: Duration = .seconds(30)
    ) {
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.listen = listen
        self.token = token
        self.maxBodyBytes = maxBodyBytes
        self.waitTimeout = waitTimeout
        self.nick = nick
        self.socketMode = socketMode
    }
}
