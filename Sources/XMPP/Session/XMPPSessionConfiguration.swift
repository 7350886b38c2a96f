import Foundation

/// What an ``XMPPSession`` connects to and how it behaves (RFC 6121 session set-up;
/// XEP-0199 liveness); the session's `Configuration`.
public struct XMPPSessionConfiguration<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    public var client: XMPPClientConfiguration
    /// Sent after every (re)connect; nil sends no presence (a send-only client).
    public var initialPresence: Presence?
    public var fetchRoster: Bool
    public var enableCarbons: Bool
    public var session: SessionStateMachine<C.Instant>.Configuration
    public var reconnect: ReconnectStateMachine<C>.Configuration
    /// Whether to reconnect after a loss at all.
    public var reconnects: Bool
    public var requestTimeout: Duration
    /// With no traffic for this long, ping the server (XEP-0199 §4.2)…
    public var idlePingInterval: Duration
    /// …and treat the connection as dead when the ping is not answered in this time.
    public var pingTimeout: Duration
    /// Events kept for a consumer that falls behind.
    public var maximumBufferedEvents: Int
    /// Beyond `maximumBufferedEvents`: wait for the consumer, so the connection stops
    /// reading (true: nothing is lost; the bridge), or drop new events and log them as
    /// errors (false: commands that read few events).
    public var waitsForEventConsumer: Bool
    /// Enable stream management (XEP-0198) when the server offers it.
    public var streamManagement: Bool
    /// With stream management, messages count as handled only when the consumer says
    /// so (``XMPPSession/handled(_:)``, the bridge: after its durable commit); otherwise
    /// as soon as they are handed to the consumer.
    public var acknowledgesAfterConsumer: Bool
    /// Ask for a resumable stream management session and resume it after a lost
    /// connection (XEP-0198 §5), so nothing is sent or received twice.
    public var resumesStreams: Bool
    /// A stream management session stored by an earlier process, resumed on the first
    /// connect (XEP-0198 §5).
    public var storedSession: StreamManagementStateMachine.StoredSession?
    /// Told the resumable session (id, location, JID) when one begins, is resumed or
    /// ends (nil), to persist it; positions within it go to the ``ledger``.
    public var sessionStateChanged: (@Sendable (StreamManagementStateMachine.StoredSession?) -> Void)?
    /// Told each position change right before the write it describes (outbound numbers
    /// with their ids, acknowledgements, the handled count we report), so a session
    /// resumed after a crash neither resends what the server took nor reports fewer
    /// handled stanzas than the server already heard. Nil: positions are not kept.
    public var ledger: (any StreamPositionLedger)?
    /// How long an answer to the server's `<r/>` may wait to report more handled
    /// stanzas at once (XEP-0198 §4): at most this, or until ``acknowledgementBatch``
    /// more are handled. Zero: answered at once. What it reports is durable either way;
    /// the wait only saves a write and the server's next `<r/>` per stanza.
    public var acknowledgementDelay: Duration
    public var acknowledgementBatch: UInt32
    /// How long our `<r/>` may wait to ask for several delivery batches at once
    /// (XEP-0198 §4), unless ``acknowledgementRequestStanzas`` stanzas or
    /// ``acknowledgementRequestWaiters`` senders wait for an answer
    /// (``AcknowledgementRequestPacer``). Zero: one `<r/>` with every batch.
    /// The acknowledgement comes later; the messages do not.
    public var acknowledgementRequestDelay: Duration
    public var acknowledgementRequestStanzas: Int
    public var acknowledgementRequestWaiters: Int
    /// The `<r/>` timer's wait instead of ``acknowledgementRequestDelay`` while batches
    /// keep carrying requests (a steady stream); not above it: off.
    public var acknowledgementRequestSteadyDelay: Duration
    /// When a batch carries our `<r/>`, from the four settings above.
    var acknowledgementRequests: AcknowledgementRequestPacer {
        AcknowledgementRequestPacer(
            delay: self.acknowledgementRequestDelay, stanzas: self.acknowledgementRequestStanzas, waiters: self.acknowledgementRequestWaiters,
            steadyDelay: self.acknowledgementRequestSteadyDelay
        )
    }
    /// Catch up from the account's message archive (XEP-0313) after every gap in the
    /// stream; nil: never.
    public var catchUp: ArchiveCatchUpStateMachine.Configuration?
    /// The archive cursor stored by an earlier run.
    public var archiveCursor: ArchiveCursor?
    /// On ``XMPPSession/stop()``, how long to wait for the server to acknowledge what is
    /// still unacknowledged (XEP-0198) before closing the stream.
    public var stopAcknowledgementTimeout: Duration
    /// While stanzas are unacknowledged (XEP-0198), the server's `<a/>` must come within
    /// this; otherwise the connection is dropped and resumed (``AcknowledgementWatchdog``).
    /// Zero: off (the delivery timeout and the idle ping remain).
    public var acknowledgementTimeout: Duration
    /// When the server lost a session with messages unacknowledged, look them up in the
    /// account's archive before sending them again (``ArchiveCheckStateMachine``); nil:
    /// send them again unchecked (at least once).
    public var archiveCheck: ArchiveCheckStateMachine.Configuration?
    /// What an earlier owner of the account, another process, left (``PriorSession``);
    /// ignored with a ``storedSession`` of this process's own.
    public var priorSession: PriorSession?
    /// Asked before each connection attempt; false: none is made now (a backoff, as
    /// for a failed attempt). Another process may be working on the account (its
    /// owner by lease; a paused former owner must not resume its stream and resend).
    public var mayConnect: (@Sendable () -> Bool)?
    /// Rooms to join after connecting (XEP-0045); ``XMPPSession/setRooms(_:cursors:)`` changes them.
    public var rooms: [RoomConfiguration]
    public var roomTimings: RoomTimings
    /// Each room's archive cursor stored by an earlier run.
    public var roomCursors: [JID: ArchiveCursor]
    /// The SASL2 user agent and FAST token kept between logins; nil: kept in memory.
    public var loginState: LoginStateKeeper?
    /// Where connection warnings go when many accounts share a process (``ConnectionNotices``);
    /// nil: each is logged.
    public var connectionNotices: ConnectionNotices<C>?

    public init(
        client: XMPPClientConfiguration,
        initialPresence: Presence? = Presence(),
        fetchRoster: Bool = true,
        enableCarbons: Bool = true,
        session: SessionStateMachine<C.Instant>.Configuration,
        reconnect: ReconnectStateMachine<C>.Configuration = .init(),
        reconnects: Bool = true,
        requestTimeout: Duration = .seconds(30),
        idlePingInterval: Duration = .seconds(60),
        pingTimeout: Duration = .seconds(20),
        maximumBufferedEvents: Int = 10_000,
        waitsForEventConsumer: Bool = false,
        streamManagement: Bool = true,
        acknowledgesAfterConsumer: Bool = false,
        resumesStreams: Bool = true,
        storedSession: StreamManagementStateMachine.StoredSession? = nil,
        sessionStateChanged: (@Sendable (StreamManagementStateMachine.StoredSession?) -> Void)? = nil,
        ledger: (any StreamPositionLedger)? = nil,
        acknowledgementDelay: Duration = .zero,
        acknowledgementBatch: UInt32 = 64,
        acknowledgementRequestDelay: Duration = .zero,
        acknowledgementRequestStanzas: Int = 64,
        acknowledgementRequestWaiters: Int = 4,
        acknowledgementRequestSteadyDelay: Duration = .zero,
        catchUp: ArchiveCatchUpStateMachine.Configuration? = nil,
        archiveCursor: ArchiveCursor? = nil,
        stopAcknowledgementTimeout: Duration = .seconds(2),
        acknowledgementTimeout: Duration = .seconds(5),
        archiveCheck: ArchiveCheckStateMachine.Configuration? = .init(),
        priorSession: PriorSession? = nil,
        mayConnect: (@Sendable () -> Bool)? = nil,
        rooms: [RoomConfiguration] = [],
        roomTimings: RoomTimings = RoomTimings(),
        roomCursors: [JID: ArchiveCursor] = [:],
        loginState: LoginStateKeeper? = nil,
        connectionNotices: ConnectionNotices<C>? = nil
    ) {
        self.client = client
        self.initialPresence = initialPresence
        self.fetchRoster = fetchRoster
        self.enableCarbons = enableCarbons
        self.session = session
        self.reconnect = reconnect
        self.reconnects = reconnects
        self.requestTimeout = requestTimeout
        self.idlePingInterval = idlePingInterval
        self.pingTimeout = pingTimeout
        self.maximumBufferedEvents = maximumBufferedEvents
        self.waitsForEventConsumer = waitsForEventConsumer
        self.streamManagement = streamManagement
        self.acknowledgesAfterConsumer = acknowledgesAfterConsumer
        self.resumesStreams = resumesStreams
        self.storedSession = storedSession
        self.sessionStateChanged = sessionStateChanged
        self.ledger = ledger
        self.acknowledgementDelay = acknowledgementDelay
        self.acknowledgementBatch = acknowledgementBatch
        self.acknowledgementRequestDelay = acknowledgementRequestDelay
        self.acknowledgementRequestStanzas = acknowledgementRequestStanzas
        self.acknowledgementRequestWaiters = acknowledgementRequestWaiters
        self.acknowledgementRequestSteadyDelay = acknowledgementRequestSteadyDelay
        self.catchUp = catchUp
        self.archiveCursor = archiveCursor
        self.stopAcknowledgementTimeout = stopAcknowledgementTimeout
        self.acknowledgementTimeout = acknowledgementTimeout
        self.archiveCheck = archiveCheck
        self.priorSession = priorSession
        self.mayConnect = mayConnect
        self.rooms = rooms
        self.roomTimings = roomTimings
        self.roomCursors = roomCursors
        self.loginState = loginState
        self.connectionNotices = connectionNotices
    }
}

extension XMPPSessionConfiguration {
    /// Why no connection may be made now (``mayConnect`` says no), if so: a failed attempt
    /// for the reconnect machine (its backoff applies; the owner stops the session soon after).
    func connectionRefusal() -> XMPPClientError? {
        guard let mayConnect = self.mayConnect, !mayConnect() else { return nil }
        return .connectFailed(attempts: ["not connecting: this process may not work on the account now"])
    }
}
