import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Connects an account: resolves where to go, opens TCP, secures it, authenticates and
/// binds a resource (RFC 6120 §3–§7; XEP-0368).
public struct XMPPClient: Sendable {
    private let eventLoopGroup: any EventLoopGroup
    private let resolver: DNSSRVResolver
    private let tlsContexts: TLSContextCache
    /// SCRAM salted passwords from earlier connections: one client is one account's, so a
    /// reconnect skips PBKDF2 (its most expensive step, on the event loop).
    public let scramKeys = SCRAMKeyCache()
    /// Where SASL challenges are answered (PBKDF2); nil: on the connection's event loop.
    private let blockingWork: (any BlockingWorkRunner)?
    /// Trims idle connections' XML parsers and TLS buffers; nil: never (a command's one connection).
    private let idleTrims: IdleTrimSweeps?
    private let logger: Logger

    /// - Parameter tlsContexts: TLS contexts shared by this client's connections; pass one
    ///   cache to many clients (the bridge's accounts) to share them wider.
    public init(
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        resolver: DNSSRVResolver = DNSSRVResolver(),
        tlsContexts: TLSContextCache = TLSContextCache(),
        blockingWork: (any BlockingWorkRunner)? = nil,
        idleTrims: IdleTrimSweeps? = nil,
        logger: Logger
    ) {
        self.idleTrims = idleTrims
        self.blockingWork = blockingWork
        self.eventLoopGroup = eventLoopGroup
        self.resolver = resolver
        self.tlsContexts = tlsContexts
        self.logger = logger
    }

    /// Connects and negotiates. Each target is tried in order until one works; failures
    /// that another server would not fix (authentication, certificates, policy) stop at once.
    /// - Parameter resume: a stream management session to resume (XEP-0198 §5); the
    ///   connection's ``XMPPConnection/resumeAnswer`` says whether it was.
    public func connect(
        configuration: XMPPClientConfiguration,
        password: String,
        resume: StreamNegotiationStateMachine.ResumeRequest? = nil
    ) async throws(XMPPClientError) -> XMPPConnection {
        try await self.establish(configuration: configuration, password: password, purpose: .login, resume: resume)
    }

    /// Creates the account with in-band registration (XEP-0077) over a secured stream,
    /// then closes the stream. Throws ``XMPPClientError/registrationFailed(condition:text:)``
    /// when the server refuses (e.g. `conflict`: the account exists) or does not offer it.
    public func register(configuration: XMPPClientConfiguration, password: String) async throws(XMPPClientError) {
        let connection = try await self.establish(configuration: configuration, password: password, purpose: .register)
        await connection.close()
    }

    private func establish(
        configuration: XMPPClientConfiguration,
        password: String,
        purpose: StreamNegotiationStateMachine.Configuration.Purpose,
        resume: StreamNegotiationStateMachine.ResumeRequest? = nil
    ) async throws(XMPPClientError) -> XMPPConnection {
        var logger = self.logger
        logger.tagAccount(configuration.jid)
        let targets = try await self.targets(for: configuration, logger: logger)
        var failures: [String] = []
        for target in targets {
            logger.info("connecting", metadata: ["target": "\(target)"])
            do {
                let connection = try await self.attempt(target, configuration: configuration, password: password, purpose: purpose, resume: resume, logger: logger)
                logger.info(
                    purpose == .login ? "session established" : "account registered",
                    metadata: ["jid": "\(connection.jid)", "target": "\(target)", "login": "\(connection.login.summary)"]
                )
                return connection
            } catch {
                logger.notice("connection attempt failed", metadata: ["target": "\(target)", "error": "\(error)"])
                switch error {
                case .connectFailed(let attempts):
                    failures.append(contentsOf: attempts.map { "\(target): \($0)" })
                case .closedByServer, .streamClosedByServer, .timedOut:
                    failures.append("\(target): \(error)")
                case .configuration, .resolutionFailed, .tlsNotOffered, .startTLSRefused, .tls, .authenticationFailed,
                    .bindFailed, .registrationFailed, .streamError, .invalidServerXML, .unexpectedElement:
                    throw error
                }
            }
        }
        throw .connectFailed(attempts: failures)
    }

    private func targets(for configuration: XMPPClientConfiguration, logger: Logger) async throws(XMPPClientError) -> [ConnectionTarget] {
        var direct: [SRVRecord] = []
        var plain: [SRVRecord] = []
        if configuration.host == nil {
            let domain = configuration.jid.domainpart
            direct = (try? await self.resolver.lookup("_xmpps-client._tcp.\(domain)")) ?? []
            plain = (try? await self.resolver.lookup("_xmpp-client._tcp.\(domain)")) ?? []
            logger.debug("SRV lookup", metadata: ["direct-tls": "\(direct.count)", "starttls": "\(plain.count)"])
        }
        let targets = try ConnectionTarget.plan(
            configuration: configuration, directTLSRecords: direct, startTLSRecords: plain,
            random: { Int.random(in: 0...$0) }
        ).get()
        for target in targets where target.tlsMode == .plaintextOnLoopback && !Self.isLoopback(target.host) {
            throw .configuration("plaintext is only allowed to loopback addresses, not \(target.host)")
        }
        return targets
    }

    private func attempt(
        _ target: ConnectionTarget,
        configuration: XMPPClientConfiguration,
        password: String,
        purpose: StreamNegotiationStateMachine.Configuration.Purpose,
        resume: StreamNegotiationStateMachine.ResumeRequest?,
        logger: Logger
    ) async throws(XMPPClientError) -> XMPPConnection {
        let tlsContext: TLSContext
        do {
            tlsContext = try self.tlsContexts.context(for: configuration.tls)
        } catch {
            throw .tls(error)
        }
        if configuration.tls.certificateVerification == .insecureNoVerification {
            logger.warning("TLS certificate verification is DISABLED for this connection", metadata: ["target": "\(target)"])
        }
        let nonce: String
        do {
            nonce = try SCRAMStateMachine.makeClientNonce()
        } catch {
            throw .configuration("no randomness for the SCRAM nonce: \(error)")
        }
        var sasl = configuration.sasl
        if target.tlsMode == .plaintextOnLoopback { sasl.allowPlainWithoutTLS = true }
        let machine = StreamNegotiationStateMachine(
            configuration: .init(
                jid: configuration.jid, tlsMode: target.tlsMode, sasl: sasl, purpose: purpose, resume: resume, sasl2: configuration.sasl2
            ),
            password: password,
            clientNonce: nonce,
            ids: StanzaIDGenerator(prefix: String(nonce.prefix(8))),
            keyCache: self.scramKeys
        )
        let domain = configuration.jid.domainpart
        let loop = self.eventLoopGroup.next()
        let negotiated = loop.makePromise(of: XMPPClientChannelHandler.Negotiated.self)
        let terminated = loop.makePromise(of: XMPPClientError?.self)
        let inbox = NIOLockedValueBox<ElementInbox?>(nil)
        let limits = configuration.limits
        let blockingWork = self.blockingWork
        let idleTrims = self.idleTrims
        let timeout = TimeAmount.nanoseconds(configuration.negotiationTimeout.nanoseconds)
        // The channel initializer runs on the event loop; the inbox is handed back through this box.
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanoseconds))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            // NIO keeps a channel's receive buffer between reads at the largest size a burst
            // grew it to (64 KB by default), for the connection's life: bounded here at 16 KB
            // (about a TLS record), and starting at 1 KB, what an idle account's reads need.
            .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 16 * 1024))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(QuickAckHandler())
                    let makeTLS = { () throws(TLSError) -> TLSHandler in try TLSHandler(context: tlsContext, expectedHost: domain) }
                    if target.tlsMode == .directTLS {
                        try channel.pipeline.syncOperations.addHandler(makeTLS())
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        XMPPClientChannelHandler(
                            machine: machine, limits: limits, domain: domain, tlsMode: target.tlsMode,
                            negotiationTimeout: timeout, makeTLSHandler: makeTLS, negotiated: negotiated,
                            terminated: terminated, blockingWork: blockingWork,
                            trimSweep: idleTrims?.sweep(on: channel.eventLoop), logger: logger
                        )
                    )
                    let handler = ElementStreamHandler(for: channel)
                    inbox.withLockedValue { $0 = handler.inbox }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: target.host, port: target.port).get()
        } catch {
            negotiated.fail(error)
            terminated.succeed(nil)
            throw .connectFailed(attempts: ["\(error)"])
        }
        do {
            let result = try await negotiated.futureResult.get()
            guard let inbox = inbox.withLockedValue({ $0 }) else {
                throw XMPPClientError.closedByServer
            }
            return XMPPConnection(
                jid: result.jid, features: result.features, mechanism: result.mechanism,
                inbox: inbox, target: target, channel: channel,
                terminated: terminated.futureResult, resumeAnswer: result.resumeAnswer, login: result.login
            )
        } catch let error as XMPPClientError {
            try? await channel.close()
            throw error
        } catch {
            try? await channel.close()
            throw .connectFailed(attempts: ["\(error)"])
        }
    }

    /// Whether `host` is a loopback name or address (127.0.0.0/8, ::1, localhost).
    public static func isLoopback(_ host: String) -> Bool {
        let trimmed = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if trimmed == "localhost" || trimmed == "::1" { return true }
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy({ ("0"..."9").contains($0) }) && UInt8($0) != nil }
    }
}
