import AccountTransport
import BridgeFeatures
import BridgeRelay
import BridgeState
import CoreMetrics
import GatewayComponent
import HTTPIngress
import LocalArchive
import LocalTransport
import Logging
import NIOCore
import TransportCore
import XMPP

/// Builds transports from configuration.
package struct TransportFactory: Sendable {
    package let group: any EventLoopGroup
    package let bridgeID: String
    /// How long a delivery batch may take before the connection is dropped and made anew.
    package var deliveryTimeout: Duration = .seconds(30)
    /// Events a session holds for the bridge before it stops reading its socket.
    package var eventBuffer: Int = 256
    /// Where accounts' stream management sessions are kept across restarts (nil: not kept).
    package var journal: Journal?
    /// What the state holds for an account when it is made: its stream session, its login
    /// state (SASL2 user agent, FAST token) and its archive cursor (``ResumePoint``). A read
    /// that fails stops the account from starting: without its cursor a session would start
    /// its catch-up at the archive's end and skip everything since.
    package var storedStartingPoint: @Sendable (String) throws -> StoredStartingPoint = { _ in StoredStartingPoint() }
    /// Connection warnings of all accounts, held back when many come at once.
    package var connectionNotices: ConnectionNotices<EventLoopClock>?
    /// Each account's stream positions (with ``journal``): where its session writes them
    /// before each write, and what a restart resumes from.
    package var ledgers: StreamLedgers?
    /// One TLS context per distinct TLS setting, shared by every account's connections.
    package var tlsContexts = TLSContextCache()
    /// The event loops' sweeps that trim idle connections' XML parsers, for every account.
    package var idleTrims = IdleTrimSweeps()
    /// The login queues, one per server: how many accounts connect and log in at once.
    package var connectionGates: ConnectionGates?
    /// Where SCRAM's PBKDF2 runs (off the event loops); nil: on the connection's loop.
    package var blockingWork: (any BlockingWorkRunner)?
    /// With several instances (issue 26): an account connects only while its lease is good here.
    package var leases: LeaseBook?
    /// Answers `GET /messages/{id}` and `?wait=sent` for HTTP ingress locals.
    package var deliveryStatus: (any DeliveryStatusProviding)?
    /// The local archive, read by HTTP ingresses (issue 25).
    package var archive: (any ArchiveReading)?
    /// Where HTTP ingress counts its requests (the Prometheus registry in the daemon).
    package var metrics: any MetricsFactory = NOOPMetricsHandler.instance
    package let logger: Logger

    /// `inherited`: deliveries a former owner of the account may have sent (``InheritedDeliveries``).
    package func make(
        account: AccountConfiguration, handler: any TransportEventHandler, inherited: InheritedDeliveries? = nil, encryption: [String: ContactEncryption] = [:]
    ) throws -> XMPPTransport {
        let password = try account.password.read()
        if let exposure = account.password.exposure() {
            self.logger.warning("\(exposure)", metadata: ["account": "\(account.name)"])
        }
        var random = SystemRandomNumberGenerator()
        var logger = self.logger
        logger[metadataKey: "account"] = "\(account.name)"
        let name = account.name
        // One read of what the state holds for this account (nothing without a journal).
        let starting = self.journal == nil ? nil : try self.storedStartingPoint(name)
        var stateChanged: (@Sendable (StreamManagementStateMachine.StoredSession?) -> Void)?
        var ledger: (any StreamPositionLedger)?
        var stored: StreamManagementStateMachine.StoredSession?
        // The session in the state: this host's to restore (its ledger agrees), or, taken
        // over, the former owner's to resume (``InheritedDeliveries``).
        var lastSession: StoredStreamSession?
        if let journal = self.journal, let ledgers = self.ledgers {
            stateChanged = { session in journal.record([.streamSession(transport: name, session.map(StoredStreamSession.init))]) }
            let file = try ledgers.ledger(for: name)
            // Several instances: what the server was told is shared, for the next owner.
            ledger = self.leases == nil ? file : SharedStreamPositions(local: file, transport: name, journal: journal)
            lastSession = starting?.session
            // Taken over, the session in the state is another owner's, even when this host's
            // ledger names it (a session resumed elsewhere keeps its id): inherited, never
            // restored with this ledger's positions, which may be out of date.
            if inherited == nil { stored = StreamLedgers.resumable(lastSession, ledger: file.snapshot())?.streamManagement }
        }
        var mayConnect: (@Sendable () -> Bool)?
        if let leases = self.leases { mayConnect = { leases.mayWork(name) } }
        // One event loop per account for all its connections; the account's tasks prefer it.
        let loop = self.group.next()
        let cursor = starting?.resumePoint.flatMap(ArchiveCursor.init)
        var client = account.client
        var loginState: LoginStateKeeper?
        if account.login == .auto {
            client.sasl2 = BridgeIdentity.login(bindInline: account.bindsInline, fast: client.tls.certificateVerification != .insecureNoVerification)
            loginState = self.loginState(account: name, stored: starting?.login, password: password)
        }
        // The session and its connections log under the account's JID, in one copy of the
        // metadata they share (each copy is a dictionary an account keeps for life).
        var sessionLogger = logger
        sessionLogger.tagAccount(client.jid)
        let session = XMPPSession(
            configuration: .init(
                client: client,
                initialPresence: Presence(),
                session: BridgeIdentity.session(subscriptionPolicy: account.subscriptionPolicy, omemo: account.omemo),
                // The bridge reads every event: a slow journal pauses the socket, never drops.
                maximumBufferedEvents: self.eventBuffer,
                waitsForEventConsumer: true,
                streamManagement: account.streamManagement,
                // The server hears a message is handled only once it is committed.
                acknowledgesAfterConsumer: true,
                storedSession: stored,
                sessionStateChanged: stateChanged,
                ledger: ledger,
                // One answer per 200 ms (or 64 stanzas) to a server that asks after every
                // stanza: what it reports is committed either way.
                acknowledgementDelay: .milliseconds(200),
                // Our own <r/>: one per 50 ms of trickle, or with the batch that fills the
                // worker's window of batches in flight, or once 64 stanzas wait; a
                // steady stream's tail is asked for within a second, or a quarter of the
                // delivery or acknowledgement timeout when shorter (AcknowledgementRequestPacer).
                acknowledgementRequestDelay: .milliseconds(50),
                acknowledgementRequestWaiters: ConfigurationLoader.batchesInFlight,
                acknowledgementRequestSteadyDelay: Self.steadyDelay(deliveryTimeout: self.deliveryTimeout, acknowledgementTimeout: account.acknowledgementTimeout),
                catchUp: account.catchUp ? ArchiveCatchUpStateMachine.Configuration(maximumAge: account.catchUpMaxAge) : nil,
                archiveCursor: cursor,
                acknowledgementTimeout: account.acknowledgementTimeout,
                priorSession: inherited.map { $0.handed(with: lastSession) },
                mayConnect: mayConnect,
                roomTimings: Self.roomTimings(account.roomTimings, deliveryTimeout: self.deliveryTimeout),
                loginState: loginState,
                connectionNotices: self.connectionNotices
            ),
            password: password,
            client: XMPPClient(
                eventLoopGroup: loop, tlsContexts: self.tlsContexts, blockingWork: self.blockingWork, idleTrims: self.idleTrims, logger: sessionLogger
            ),
            // Its timers (coalesced acknowledgements, pings, rooms) arm and fire on the loop.
            clock: EventLoopClock(loop),
            executor: EventLoopTaskExecutor(loop),
            connectionGate: self.connectionGates?.gate(for: account.client),
            ids: StanzaIDGenerator(prefix: "\(account.name)-\(String(random.next() % 1_000_000_000, radix: 36))"),
            logger: sessionLogger
        )
        // Files re-uploaded for channels with `reupload`: fetched and uploaded over HTTPS
        // trusting what the account's XMPP connection trusts.
        let http = HTTPSClient(
            configuration: .init(tls: account.client.tls, requestTimeout: .seconds(120)), eventLoopGroup: loop, tlsContexts: self.tlsContexts, logger: logger
        )
        return XMPPTransport(
            name: account.name, session: session, handler: handler, bridgeID: self.bridgeID, deliveryTimeout: self.deliveryTimeout,
            reuploader: FileReuploader(http: http, logger: logger), profile: account.profile,
            omemo: account.omemo ? OMEMOSettings(trust: account.omemoTrust, keeper: self.omemoKeeper(account: name), encryption: encryption) : nil,
            eventLoop: loop, notices: self.connectionNotices, logger: logger
        )
    }

    /// Where an account's login state is kept: the state, through the journal (a change is
    /// recorded, not waited for: both servers keep a token valid until its successor is
    /// used); in memory without a journal.
    private func loginState(account: String, stored: StoredLogin?, password: String) -> LoginStateKeeper {
        guard let journal = self.journal else { return LoginStateKeeper(stored: nil, password: password) }
        return LoginStateKeeper(
            stored: stored.map(LoginStateKeeper.Stored.init), password: password,
            record: { journal.record([.login(transport: account, StoredLogin($0))]) }
        )
    }

    /// Where an OMEMO account's state is kept: the state, through the journal (read on its
    /// thread, committed with what else commits); in memory without a journal.
    private func omemoKeeper(account: String) -> OMEMOStateKeeper {
        guard let journal = self.journal else { return .inMemory() }
        return OMEMOStateKeeper(
            load: { try await journal.read { store throws(StateStoreError) in try store.omemoState(account: account) } },
            commit: { changes in try await journal.commit([.omemo(account: account, changes)]) },
            record: { changes in journal.record([.omemo(account: account, changes)]) }
        )
    }

    /// A local transport, with what it can do beyond relaying; throws when an http local's
    /// token cannot be read.
    package func make(
        local: LocalConfiguration, handler: any TransportEventHandler, channels: @escaping @Sendable () -> Set<String>,
        templates: @escaping @Sendable (String) -> WebhookTemplate? = { _ in nil }
    ) throws -> (transport: any Transport, capabilities: TransportCapabilities) {
        let options = LocalInputOptions(
            maxLineBytes: local.maxLineBytes,
            invalidUTF8: LineSplitter.InvalidUTF8Policy(rawValue: local.invalidUTF8) ?? .replace,
            nick: local.nick
        )
        switch local.kind {
        case .stdio:
            let stdio = StdioTransport(
                name: local.name, options: options, output: StdioTransport.OutputFormat(rawValue: local.output) ?? .text,
                exitOnEndOfInput: local.exitOnEndOfInput, handler: handler, logger: self.logger
            )
            return (stdio, .presenceEvents(stdio))
        case .fifo:
            return (FIFOTransport(name: local.name, path: local.path ?? "", mode: local.mode, options: options, handler: handler, logger: self.logger), .none)
        case .socket:
            let socket = SocketTransport(
                name: local.name, path: local.path ?? "", mode: local.mode, options: options, group: self.group,
                handler: handler, channels: channels, logger: self.logger
            )
            return (socket, .presenceEvents(socket))
        case .http:
            guard let http = local.http else { throw PasswordSource.Failure(description: "http local \(local.name) has no listen address") }
            if let exposure = http.token?.exposure() {
                self.logger.warning("\(exposure.replacingOccurrences(of: "password", with: "token"))", metadata: ["local": "\(local.name)"])
            }
            let token = try http.token.map { BearerToken(try $0.read()) }
            let name = local.name
            let ingress = HTTPTransport(
                name: local.name,
                options: HTTPIngressOptions(
                    listen: http.listen, token: token, maxBodyBytes: http.maxBodyBytes, waitTimeout: http.waitTimeout, nick: local.nick,
                    socketMode: local.mode, maxConnections: http.maxConnections, idleTimeout: http.idleTimeout
                ),
                group: self.group, handler: handler, status: self.deliveryStatus, channels: channels, template: templates,
                makeID: {
                    var random = SystemRandomNumberGenerator()
                    return "\(name)-\(String(random.next(), radix: 36))\(String(random.next() % 1_000_000, radix: 36))"
                },
                archive: self.archive, metrics: self.metrics, logger: self.logger
            )
            return (ingress, .none)
        }
    }

    /// A gateway's component transport (issue 23); throws when its secret cannot be read or
    /// its domain is invalid. What the previous process handed over (its ledger) left the
    /// queue at start (``BridgeProcess``).
    package func make(gateway: GatewayConfiguration, handler: any TransportEventHandler, linking: (any GatewayLinking)?) throws -> GatewayTransport {
        let secret = try gateway.secret.read()
        if let exposure = gateway.secret.exposure() {
            self.logger.warning("\(exposure.replacingOccurrences(of: "password", with: "secret"))", metadata: ["gateway": "\(gateway.name)"])
        }
        var ledger: StreamLedgerFile?
        if self.journal != nil, let ledgers = self.ledgers {
            ledger = try ledgers.ledger(for: gateway.transportName)
        }
        let loop = self.group.next()
        return try GatewayTransport(
            name: gateway.transportName,
            component: XMPPComponentClient.Configuration(domain: gateway.domain, host: gateway.host, port: gateway.port, allowRemote: gateway.allowRemote),
            secret: secret, serverDomain: try JID(gateway.serverDomain), displayName: gateway.displayName, registration: gateway.registration,
            allow: gateway.allow, handler: handler, linking: linking, bridgeID: self.bridgeID, ledger: ledger,
            keepalive: gateway.keepalive, requestTimeout: self.deliveryTimeout, eventLoop: loop, logger: self.logger
        )
    }

    /// The `<r/>` timer's wait in a steady stream: a second, or a quarter of the delivery
    /// timeout or of `ack_timeout` when shorter, so neither fires on a healthy stream's tail.
    /// A room's reflection wait ends well within the delivery timeout, which would otherwise
    /// drop the connection over a room that does not reflect.
    package static func roomTimings(_ timings: RoomTimings, deliveryTimeout: Duration) -> RoomTimings {
        var timings = timings
        timings.reflectionTimeout = min(timings.reflectionTimeout, deliveryTimeout / 2)
        return timings
    }

    package static func steadyDelay(deliveryTimeout: Duration, acknowledgementTimeout: Duration) -> Duration {
        var delay = min(.seconds(1), deliveryTimeout / 4)
        if acknowledgementTimeout > .zero { delay = min(delay, acknowledgementTimeout / 4) }
        return delay
    }
}
