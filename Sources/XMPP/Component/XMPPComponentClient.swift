import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Connects a component to its server (XEP-0114 `jabber:component:accept`): TCP to the
/// server's component listener, stream header, handshake with the shared secret.
///
/// The protocol has no TLS and no SASL: the secret's digest and every stanza cross in
/// the clear, so a link to anything but a loopback address is refused unless
/// `allowRemote` says the operator secured the path another way (a tunnel, a private
/// network).
public struct XMPPComponentClient: Sendable {
    /// What one component connection needs, except the secret (XEP-0114 §3).
    public struct Configuration: Sendable {
        /// The component's domain, as declared on the server (`Component "gw.example"`).
        public var domain: String
        /// The server's component listener.
        public var host: String
        public var port: Int
        /// A non-loopback `host` is allowed (the operator secured the path otherwise).
        public var allowRemote: Bool
        /// Per TCP connection attempt.
        public var connectTimeout: Duration
        /// From TCP connect to the server's empty `<handshake/>`.
        public var handshakeTimeout: Duration
        /// Bounds on what the server sends (stanza size, depth, attributes).
        public var limits: XMLStreamLimits

        public init(
            domain: String, host: String, port: Int, allowRemote: Bool = false, connectTimeout: Duration = .seconds(10),
            handshakeTimeout: Duration = .seconds(10), limits: XMLStreamLimits = XMLStreamLimits()
        ) {
            self.domain = domain
            self.host = host
            self.port = port
            self.allowRemote = allowRemote
            self.connectTimeout = connectTimeout
            self.handshakeTimeout = handshakeTimeout
            self.limits = limits
        }
    }

    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    public init(eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Connects and completes the handshake; the connection's ``XMPPConnection/jid`` is the
    /// component's domain.
    public func connect(_ configuration: Configuration, secret: String) async throws(XMPPClientError) -> XMPPConnection {
        guard configuration.allowRemote || XMPPClient.isLoopback(configuration.host) else {
            throw .configuration(
                "a component link has no TLS: \(configuration.host) is not a loopback address (set allow_remote = true only for a path secured otherwise)"
            )
        }
        let domain: JID
        do {
            domain = try JID(configuration.domain)
        } catch {
            throw .configuration("component domain \(configuration.domain): \(error)")
        }
        let logger = {
            var logger = self.logger
            logger[metadataKey: "component"] = "\(configuration.domain)"
            return logger
        }()
        let loop = self.eventLoopGroup.next()
        let accepted = loop.makePromise(of: Void.self)
        let terminated = loop.makePromise(of: XMPPClientError?.self)
        let inbox = NIOLockedValueBox<ElementInbox?>(nil)
        let machine = ComponentNegotiationStateMachine(secret: secret)
        let timeout = TimeAmount.nanoseconds(configuration.handshakeTimeout.nanoseconds)
        let limits = configuration.limits
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanoseconds))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // The server answers each ping in a small write of its own; with its
                    // Nagle and our delayed ACK each chunk would stall 40 ms.
                    try channel.pipeline.syncOperations.addHandler(QuickAckHandler())
                    try channel.pipeline.syncOperations.addHandler(
                        ComponentChannelHandler(
                            machine: machine, limits: limits, domain: configuration.domain, handshakeTimeout: timeout,
                            accepted: accepted, terminated: terminated, logger: logger
                        )
                    )
                    let handler = ElementStreamHandler(for: channel)
                    inbox.withLockedValue { $0 = handler.inbox }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let target = ConnectionTarget(host: configuration.host, port: configuration.port, tlsMode: .plaintextOnLoopback)
        logger.info("connecting component", metadata: ["target": "\(target)"])
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        } catch {
            accepted.fail(error)
            terminated.succeed(nil)
            throw .connectFailed(attempts: ["\(configuration.host):\(configuration.port): \(error)"])
        }
        do {
            try await accepted.futureResult.get()
            guard let inbox = inbox.withLockedValue({ $0 }) else { throw XMPPClientError.closedByServer }
            logger.info("component connected", metadata: ["target": "\(target)"])
            let none = StreamFeatures(XMLElement(name: "features", namespace: XMPPNamespace.stream))
            return XMPPConnection(
                jid: domain, features: none, mechanism: nil, inbox: inbox, target: target,
                channel: channel, terminated: terminated.futureResult
            )
        } catch let error as XMPPClientError {
            try? await channel.close()
            throw error
        } catch {
            try? await channel.close()
            throw .connectFailed(attempts: ["\(error)"])
        }
    }
}
