import Foundation
import Logging

/// A long-lived client session for one account (RFC 6120, RFC 6121): connects, restores
/// itself (carbons, roster, presence), answers what it must, tracks IQ requests, keeps the
/// connection alive with pings, and reconnects with backoff after a loss.
///
/// Decisions are made by pure machines: ``SessionStateMachine`` for each stanza and
/// ``ReconnectStateMachine`` for when to connect. This actor runs the connection (its read
/// loop and timers) and hands the rest to its parts, each a type of its own that runs on the
/// actor: ``SessionStreamManagement`` (XEP-0198), ``SessionRooms`` (XEP-0045),
/// ``SessionArchiveCheck`` and ``SessionCatchUp`` (XEP-0313), ``SessionRestore`` and
/// ``SessionKeepalive`` (XEP-0199); its connection holds the IQs waiting for answers
/// (``PendingRequests``). Time comes from the injected clock, so tests can drive it with a
/// manual clock. As a ``RosterRequester`` it serves the features built on its requests
/// (``HTTPFileUpload``) and the roster requests.
///
/// Final, its public methods pre-specialized for ``EventLoopClock``: from another module a
/// generic method runs unspecialized, each clock-dependent value allocated at run time.
public final actor XMPPSession<C: Clock>: RosterRequester where C.Duration == Duration, C.Instant: Sendable {
    public nonisolated let events: SessionEventStream
    /// The account's bare JID, as configured.
    public nonisolated let account: JID
    /// The configuration, login, clock, executor, logger and ids it is given.
    var dependencies: SessionDependencies<C>
    var machine: SessionStateMachine<C.Instant>
    /// The current connection and what lives as long as it does (timers, requests,
    /// keepalive, work beside reading).
    var current: ConnectionScope<C.Instant>
    /// XEP-0198: counting, acknowledgements both ways, resumption, the watchdog.
    let streamManagement: SessionStreamManagement<C>
    /// Lost streams: the messages in doubt after them, looked up in the archives.
    let archiveCheck: SessionArchiveCheck<C>
    /// Catching up from the account's archive after gaps (XEP-0313), and the live messages
    /// held meanwhile.
    let catchUp: SessionCatchUp<C>
    /// Stopping, the backoff sleep a stop cuts short, callers waiting on the roster.
    var lifecycle = SessionLifecycle()
    /// The presence we broadcast, and what it carries.
    var own: OwnPresence
    /// Ignored stanzas: debug lines, and a summary now and then (never a flood).
    var ignoredStanzas = IgnoredStanzaLog<C.Instant>()
    /// The rooms we sit in (XEP-0045).
    let rooms: SessionRooms<C>

    @_specialize(exported: true, where C == EventLoopClock)
    public init(
        configuration: Configuration,
        password: String,
        client: any XMPPConnector,
        clock: C,
        executor: (any TaskExecutor)? = nil,
        connectionGate: ConnectionGate? = nil,
        ids: StanzaIDGenerator,
        logger: Logger
    ) {
        var logger = logger
        logger.tagAccount(configuration.client.jid)
        // What a Bind 2 login enables on the way is what this session would enable after it.
        var configuration = configuration
        configuration.client.sasl2?.enableStreamManagement = configuration.streamManagement
        configuration.client.sasl2?.resumesStreams = configuration.resumesStreams
        configuration.client.sasl2?.enableCarbons = configuration.enableCarbons
        self.account = configuration.client.jid.bare
        self.dependencies = SessionDependencies(
            configuration: configuration, login: SessionLogin(
                connector: client, password: password, gate: connectionGate,
                kept: configuration.client.sasl2 == nil ? nil : configuration.loginState ?? LoginStateKeeper(stored: nil, password: password)
            ),
            executor: executor, logger: logger, ids: ids, clock: clock
        )
        self.machine = SessionStateMachine(ownJID: configuration.client.jid, configuration: configuration.session)
        self.own = OwnPresence(configuration.initialPresence)
        self.current = ConnectionScope(
            keepalive: KeepaliveStateMachine(configuration: .init(interval: configuration.idlePingInterval, timeout: configuration.pingTimeout), now: clock.now)
        )
        self.streamManagement = SessionStreamManagement(acknowledgementTimeout: configuration.acknowledgementTimeout)
        self.archiveCheck = SessionArchiveCheck(configuration, now: clock.now)
        self.catchUp = SessionCatchUp(configuration)
        self.rooms = SessionRooms(configuration)
        self.events = SessionEventStream(capacity: configuration.maximumBufferedEvents, waitsWhenFull: configuration.waitsForEventConsumer)
        if let jid = self.streamManagement.adoptStoredSession(configuration, ownJID: configuration.client.jid) { self.machine.bound(as: jid) }
    }

    // MARK: - Running

    /// Connects and stays connected until ``stop()``, cancellation or a permanent failure;
    /// returns then.
    @_specialize(exported: true, where C == EventLoopClock)
    public func run() async {
        // This task lives as long as the session and keeps the largest stack of async frames
        // it ever ran (docs/performance.md): its own frame stays small, each turn's work is
        // a function of its own, and the login runs in a child task that ends.
        var reconnect = self.makeReconnect()
        var action = reconnect.start()
        var lastError: XMPPClientError?
        while !self.lifecycle.isStopping, !Task.isCancelled {
            switch action {
            case .none:
                await self.finish(lastError)
                return
            case .connect:
                // nil: stopped or cancelled meanwhile; the loop's condition ends it.
                if let next = await self.connectAndServe(&reconnect, lastError: &lastError) { action = next }
            case .wait(let until):
                await self.backOff(until: until, after: lastError)
                action = reconnect.timerFired(now: self.dependencies.clock.now)
            case .giveUp(let error):
                self.logGivingUp(error)
                await self.finish(error)
                return
            }
        }
        _ = reconnect.stop()
        await self.finish(nil)
    }

    /// One connection: logs in, serves the connection until it closes, and returns what
    /// the reconnect machine says next; nil when stopped or cancelled on the way. What
    /// logging in led to is decided by a synchronous function (``connected(_:_:lastError:)``)
    /// and what follows the connection's end by one of its own: this task keeps the deepest
    /// stack of async frames it ever ran for life (docs/performance.md), so the only frames
    /// on the way to a login are this one's and the login's own.
    @inline(never)
    private func connectAndServe(_ reconnect: inout ReconnectStateMachine<C>, lastError: inout XMPPClientError?) async -> ReconnectStateMachine<C>.Action? {
        if case .done(let action) = self.refused(&reconnect, lastError: &lastError) { return action }
        guard let login = await self.logIn() else { return nil }  // cancelled while waiting
        switch self.connected(login, &reconnect, lastError: &lastError) {
        case .serve(let connection, let next):
            let reason = await self.serve(connection)
            return await self.connectionClosed(reason, next: next, &reconnect, lastError: &lastError)
        case .unwanted(let connection):
            // stop() came while connecting: do not start a session nobody wants.
            await connection.close()
            return nil
        case .done(let action):
            return action
        }
    }

    /// A log line made outside ``run()``'s frame: its metadata would stay there for life.
    @inline(never)
    private func logGivingUp(_ error: XMPPClientError) {
        self.dependencies.logger.notice("giving up", metadata: ["error": "\(error)"])
    }

    /// The served connection closed for `reason`: reported, and the reconnect machine's
    /// next action.
    @inline(never)
    private func connectionClosed(
        _ reason: XMPPClientError?, next: ReconnectStateMachine<C>.Action, _ reconnect: inout ReconnectStateMachine<C>,
        lastError: inout XMPPClientError?
    ) async -> ReconnectStateMachine<C>.Action? {
        lastError = reason
        await self.emit(.offline(reason))
        guard !self.lifecycle.isStopping, self.dependencies.configuration.reconnects else { return next }
        return reconnect.connectionLost(reason, now: self.dependencies.clock.now)
    }

    /// One place in the process's login queue while connecting and logging in; nil when
    /// cancelled while waiting. In a child task (``ChildTask``): a login's frames are freed
    /// when it ends, not kept by the session's task for life.
    @inline(never)
    private func logIn() async -> Result<XMPPConnection, XMPPClientError>? {
        let resume = self.streamManagement.resumeRequest(as: self.machine.ownJID)
        return await ChildTask.run { await self.logIn(resume: resume) } ?? nil
    }

    /// ``logIn()``'s child: the client configuration is copied here, in the child's frame
    /// (2.4 KB), not in a frame of the session's task.
    @inline(never)
    private func logIn(resume: StreamNegotiationStateMachine.ResumeRequest?) async -> Result<XMPPConnection, XMPPClientError>? {
        await self.dependencies.login.connect(self.dependencies.configuration.client, resume: resume)
    }

    /// Waits until `until` before the next attempt (``stop()`` cuts it short), after
    /// telling why.
    @inline(never)
    private func backOff(until: C.Instant, after lastError: XMPPClientError?) async {
        var metadata: Logger.Metadata = ["in": "\(self.dependencies.clock.now.duration(to: until))", "error": "\(lastError.map { "\($0)" } ?? "connection lost")"]
        if let hint = lastError?.hint { metadata["hint"] = "\(hint)" }
        if let notices = self.dependencies.configuration.connectionNotices {
            notices.notice(.connectionFailed, account: self.account, reason: lastError.map { "\($0)" }, metadata: metadata, logger: self.dependencies.logger)
        } else {
            self.dependencies.logger.warning("connection failed; retrying", metadata: metadata)
        }
        let wake = OneShotWaiter<Void>()
        self.lifecycle.backoff = wake
        await wake.value(until: until, on: self.dependencies.clock, orElse: (), executor: self.dependencies.executor)
        self.lifecycle.backoff = nil
    }

    /// Ends the session: unavailable presence, `</stream:stream>`, a short wait for the
    /// server's close (RFC 6120 §4.4), no reconnect.
    @_specialize(exported: true, where C == EventLoopClock)
    public func stop() async {
        guard !self.lifecycle.isStopping else { return }
        self.lifecycle.isStopping = true
        self.lifecycle.backoff?.complete(.success(()))
        // Our unavailable presence takes us out of every room; the rooms' answers to it
        // are no reason to rejoin.
        self.current.timers.cancel(.rooms)
        self.rooms.table.failWaiting(XMPPSessionError.stopped)
        self.rooms.failUnreflected(XMPPSessionError.stopped)
        self.rooms.table = RoomTable()
        // A stream closed cleanly cannot be resumed: nothing to keep for the next start.
        defer { self.streamManagement.end(in: self) }
        if let connection = self.current.connection {
            // What was handled is reported before the close: the server must not keep it
            // as unacknowledged (it would store it offline, to come again).
            await self.streamManagement.sendAcknowledgement(on: connection, now: true, in: self)
            await self.streamManagement.settle(in: self)
            if self.own.presence != nil {
                try? await self.transmit([Presence(type: .unavailable).element], on: connection)
            }
            await connection.close()
        }
    }

    private func finish(_ error: XMPPClientError?) async {
        self.current.wentOffline()
        self.failPending(XMPPSessionError.stopped)
        // Nobody will check them now: their senders keep them for whoever comes next.
        for batch in self.archiveCheck.inDoubt.take().batches { batch.waiter.complete(.failure(XMPPSessionError.stopped)) }
        self.rooms.table.failWaiting(XMPPSessionError.stopped)
        await self.emit(.stopped(error))
        self.events.finish()
    }

    func emit(_ event: XMPPSessionEvent) async {
        if await !self.events.send(event) {
            self.dependencies.logger.error("event dropped: the consumer is more than \(self.dependencies.configuration.maximumBufferedEvents) events behind")
        }
    }

    /// Runs one connection until it closes; returns why it closed.
    private func serve(_ connection: XMPPConnection) async -> XMPPClientError? {
        // nil: stop() came before the child ran, which closed the connection unused.
        guard let resumed = await self.startInChild(connection) else { return nil }
        // stop() came while the child took the connection over, and closed it: nothing
        // more starts on it (no restore, no timers).
        if !self.lifecycle.isStopping { await self.runJobs(on: connection, resumed: resumed) }
        return await self.waitForEnd(of: connection)
    }

    /// Runs the connection's jobs until reading ends or the session's task is cancelled.
    /// A function of its own, which this task keeps for the connection's life: its frame
    /// holds only what lives across that wait (docs/performance.md).
    @inline(never)
    private func runJobs(on connection: XMPPConnection, resumed: Bool) async {
        let (jobs, work) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.current.work = work
        let executor = self.dependencies.executor
        // This task runs the jobs itself, what is read is taken by a task only while some
        // waits (``startReading(_:work:)``), the timers wait on the clock's callback
        // (``startTimers()``): every task an account keeps costs its memory for as long as it
        // lives (docs/performance.md), so none only waits.
        let reading = self.startReading(connection, work: work)
        await withDiscardingTaskGroup { group in
            self.startTimers()
            defer { self.stopTimers() }  // on every way out: no timer's wake-up outlives the connection
            // In a task of its own, which ends when it is done: a task keeps its largest
            // stack of async frames for life, and restoring (roster, carbons, presence,
            // rooms) needs a deep one once per connection, not for the session's lifetime.
            group.addTask { await SessionRestore.run(on: connection, resumed: resumed, in: self) }
            for await job in jobs {
                // Reading ended (the connection closed): what is still queued is dropped.
                guard self.current.connection != nil else { break }
                group.addTask(executorPreference: executor) { await job() }
            }
            // Reading ended, or this task was cancelled: the jobs under way end with it, and
            // a cancelled session drops its connection and what it read but did not take.
            group.cancelAll()
            if Task.isCancelled {
                connection.inbox.finish(discarding: true)
                await connection.abort()
            }
        }
        work.finish()
        self.current.work = nil
        // Reading's last run ends before the connection's end is handled.
        await reading.idle()
    }

    /// Waits until `connection` has closed and lets it go; returns why it closed.
    @inline(never)
    private func waitForEnd(of connection: XMPPConnection) async -> XMPPClientError? {
        let reason = await connection.closed()
        self.current.connection = nil
        self.archiveCheck.inDoubt.lastLossEndedByServer = reason?.serverEndedStream ?? false
        self.connectionEnded()
        return reason
    }

    /// The connection is gone: outstanding IQs fail. With a resumable stream management
    /// session the numbered stanzas and their waiters are kept for the next connection to
    /// resume; otherwise they fail too (their senders try again).
    private func connectionEnded() {
        self.archiveCheck.inDoubt.connectionLostAt = self.dependencies.clock.now
        self.streamManagement.watchdogConnectionEnded(in: self)
        self.current.timers.removeAll()
        self.current.wentOffline()
        let resumable = self.streamManagement.machine.resumption != nil
        self.failPending(XMPPSessionError.disconnected, keepAcknowledgements: resumable)
        _ = self.machine.connectionLost()
        self.catchUp.connectionLost(in: self)
        self.streamManagement.acknowledgements.lastCarriedRequest = nil
        self.rooms.connectionLost(resumable: resumable, in: self)
        if !resumable { self.streamManagement.end(in: self) }
    }

    /// ``start(_:)`` in a child task that ends (``ChildTask``), like every deep step of the
    /// session's long-lived task.
    @inline(never)
    private func startInChild(_ connection: XMPPConnection) async -> Bool? {
        await ChildTask.run { await self.start(connection) } ?? nil
    }

    /// Takes the connection over: resumes the stream or starts a new one, arms the
    /// keepalive; returns whether the stream was resumed, nil when the session is stopping.
    @inline(never)
    private func start(_ connection: XMPPConnection) async -> Bool? {
        // stop() may have come before this child task ran, and found no connection to
        // close: this one is not wanted either.
        guard !self.lifecycle.isStopping else {
            await connection.close()
            return nil
        }
        self.current.connection = connection
        let restored = self.streamManagement.acknowledgements.restoredSession
        let resumed = await self.streamManagement.applyResumeAnswer(on: connection, in: self)
        // From here on a loss given up (the watchdog) is this connection's, not the last one's.
        self.archiveCheck.inDoubt.lastLossEndedByServer = false
        if !resumed {
            self.machine.bound(as: connection.jid)
            self.archiveCheck.software = nil  // a new session: the server may have restarted
        }
        if !resumed, let answer = connection.login.streamManagementAnswer {
            await self.streamManagement.applyInlineEnable(answer, on: connection, in: self)
        }
        // Only a stream resumed within this process has missed nothing.
        self.catchUp.state.streamStarted(continuesLast: resumed && !restored)
        self.current.keepalive = KeepaliveStateMachine(configuration: self.current.keepalive.configuration, now: self.dependencies.clock.now)
        SessionKeepalive.arm(in: self)
        return resumed
    }

    /// Reading: a ``Drain`` woken by the connection's inbox takes what was read, batch by
    /// batch, and its task ends when nothing waits, so an idle account keeps no task for
    /// reading, nor the deep stack of async frames a stanza needs (issue 43). A task per
    /// burst, not per element: a task per element costs two trips through the executor's
    /// queue each, and a burst would wait behind every other account's work on the loop at
    /// each element (tried: docs/performance.md).
    private func startReading(_ connection: XMPPConnection, work: AsyncStream<@Sendable () async -> Void>.Continuation) -> Drain {
        let drain = Drain(executor: self.dependencies.executor)
        connection.inbox.whenAdded { drain.wake() }
        drain.start { [weak self] in await self?.takeRead(from: connection, work: work) }
        return drain
    }

    /// Takes what the connection read, in order, until nothing waits; at its end, what was
    /// outstanding fails and the connection's jobs stop.
    private func takeRead(from connection: XMPPConnection, work: AsyncStream<@Sendable () async -> Void>.Continuation) async {
        while true {
            switch connection.inbox.take() {
            case .elements(let elements):
                for element in elements { await self.take(element, on: connection) }
            case .ended:
                // The connection is gone: nothing outstanding can be answered any more.
                if self.current.connection === connection {
                    self.current.connection = nil
                    self.failPending(XMPPSessionError.disconnected, keepAcknowledgements: self.streamManagement.machine.resumption != nil)
                }
                work.finish()
                return
            case .nothing:
                return
            }
        }
    }

    /// One element read: stream management's own, or a stanza.
    @inline(never)
    private func take(_ element: XMLElement, on connection: XMPPConnection) async {
        self.current.keepalive.trafficReceived(now: self.dependencies.clock.now)
        if let actions = self.streamManagement.machine.received(element) {
            await self.streamManagement.perform(actions, on: connection, in: self)
            return
        }
        let number = self.streamManagement.machine.stanzaReceived()
        var deferred = false
        for action in await self.stanzaActions(for: element) {
            deferred = await self.take(action, number: number, on: connection) || deferred
        }
        if !self.lifecycle.rosterWaiters.isEmpty { self.lifecycle.rosterChanged(self.machine.roster) }
        if let number, !deferred { self.streamManagement.machine.handled(number) }
        // Answer `<r/>` now only when nothing waits on the consumer; otherwise its
        // handled(_:) answers, once for the whole burst.
        if self.streamManagement.machine.handled == self.streamManagement.machine.received {
            await self.streamManagement.sendAcknowledgement(on: connection, in: self)
        }
    }

    /// One action of a stanza read; true when it handed the consumer a message whose
    /// stanza is handled once the consumer has committed it. A function of its own: the
    /// message is copied in its frame, not in reading's.
    @inline(never)
    private func take(_ action: SessionStateMachine<C.Instant>.Action, number: UInt32?, on connection: XMPPConnection) async -> Bool {
        guard case .emitMessage(var message, let carbon) = action else {
            await self.perform(action, on: connection)
            return false
        }
        if let number, self.dependencies.configuration.acknowledgesAfterConsumer { message.streamNumber = number }  // handled once committed
        return await self.catchUp.emitLive(message, carbon: carbon, on: connection, in: self)
    }

    /// Runs `job` beside reading, in the connection's task group (ended with it);
    /// nothing runs without a connection.
    func spawn(_ job: @escaping @Sendable (isolated XMPPSession) async -> Void) {
        self.current.work?.yield { await job(self) }
    }

    // MARK: - Requests and stanzas

    /// A fresh stanza id.
    @_specialize(exported: true, where C == EventLoopClock)
    public func nextID() -> String {
        self.dependencies.ids.next()
    }

    /// Sends a message; returns once it is written to the connection.
    @_specialize(exported: true, where C == EventLoopClock)
    public func send(_ message: Message) async throws {
        var message = message
        if message.id == nil { message.id = self.dependencies.ids.next() }
        try await self.send(message.element)
    }

    /// Sends messages in order with one flush (ids are added where missing); returns once
    /// all are written. For bursts such as many input lines.
    @_specialize(exported: true, where C == EventLoopClock)
    public func send(_ messages: [Message]) async throws {
        guard let connection = self.current.connection else { throw XMPPSessionError.notConnected }
        var elements: [XMLElement] = []
        elements.reserveCapacity(messages.count)
        for var message in messages {
            if message.id == nil { message.id = self.dependencies.ids.next() }
            elements.append(message.element)
        }
        do {
            try await self.transmit(elements, on: connection)
        } catch {
            throw XMPPSessionError.writeFailed("\(error)")
        }
    }

    /// Round trip to the server (XEP-0199): when it returns, the server has processed
    /// everything sent before it, in order.
    @_specialize(exported: true, where C == EventLoopClock)
    public func pingServer() async throws {
        guard let connection = self.current.connection else { throw XMPPSessionError.notConnected }
        let ping = IQ(type: .get, id: self.dependencies.ids.next(), to: try? JID(connection.jid.domainpart), payload: XMLElement(name: "ping", namespace: "urn:xmpp:ping"))
        do {
            _ = try await self.request(ping)
        } catch XMPPSessionError.stanzaError(let error) where error.condition == .serviceUnavailable || error.condition == .featureNotImplemented {
            // Answered all the same.
        }
    }

    /// Sends any stanza as it is, with an id when it is a message or presence without one.
    @_specialize(exported: true, where C == EventLoopClock)
    public func send(_ element: XMLElement) async throws {
        guard let connection = self.current.connection else { throw XMPPSessionError.notConnected }
        var element = element
        // Every outgoing stanza gets an id (RFC 6120 §8.1.3), from the injected generator.
        if element[attribute: "id"] == nil, element.name == "message" || element.name == "presence" {
            element[attribute: "id"] = self.dependencies.ids.next()
        }
        do {
            try await self.transmit([element], on: connection)
        } catch {
            throw XMPPSessionError.writeFailed("\(error)")
        }
    }

    /// Sends our presence with the caps element (XEP-0115 §4). Not inlined, and the stanza
    /// made synchronously: the configuration read for it is copied, which in an async frame
    /// would cost every caller's task 1.4 KB for life (``makeReconnect()``).
    @inline(never)
    func announce(_ presence: Presence) async throws {
        try await self.send(self.announcement(of: presence))
    }

    @inline(never)
    private func announcement(of presence: Presence) -> XMLElement {
        self.own.announcement(
            of: presence, capabilities: self.dependencies.configuration.session.capabilities, node: self.dependencies.configuration.session.capabilitiesNode
        ).element
    }
}
