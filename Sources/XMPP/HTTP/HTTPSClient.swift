import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 client for single requests over TLS (RFC 9110, RFC 9112; `https` per RFC
/// 9110 §4.2.2), made for XEP-0363 uploads: one connection per request, closed after it.
///
/// TLS is our own ``TLSHandler`` with a ``TLSContext`` from the caller's
/// ``TLSConfiguration``, checked as the XMPP connection is: the chain against the trust
/// store (plus any extra CA file), the name against the URL's host (also sent as SNI). The
/// host is resolved by the bootstrap unless ``Configuration/connectAddresses`` names an
/// address for it; the certificate is still checked against the host. Decisions with no
/// I/O (the request head, the response and its limit) are ``HTTPSRequest`` and
/// ``HTTPResponseCollector``.
public struct HTTPSClient: Sendable {
    /// Limits and TLS settings.
    public struct Configuration: Sendable {
        public var tls: TLSConfiguration
        /// Until the TCP connection is up.
        public var connectTimeout: Duration
        /// From the TCP connection to the complete response (TLS handshake, request, body).
        public var requestTimeout: Duration
        /// The response head's fields together, and each field, at most this many bytes.
        public var maximumResponseHeaderBytes: Int
        /// The body of a PUT's response (a short acknowledgement) is read up to this many bytes.
        public var maximumPutResponseBytes: Int
        /// Allow `http` URLs. Only for tests; never for uploads of real data.
        public var allowInsecureHTTP: Bool
        /// Addresses to connect to instead of resolving a host (`host` → IP address), e.g.
        /// a test server's name → `127.0.0.1`. TLS still checks the certificate against the host.
        public var connectAddresses: [String: String]

        public init(
            tls: TLSConfiguration = TLSConfiguration(),
            connectTimeout: Duration = .seconds(10),
            requestTimeout: Duration = .seconds(300),
            maximumResponseHeaderBytes: Int = 64 * 1024,
            maximumPutResponseBytes: Int = 64 * 1024,
            allowInsecureHTTP: Bool = false,
            connectAddresses: [String: String] = [:]
        ) {
            self.tls = tls
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.maximumResponseHeaderBytes = maximumResponseHeaderBytes
            self.maximumPutResponseBytes = maximumPutResponseBytes
            self.allowInsecureHTTP = allowInsecureHTTP
            self.connectAddresses = connectAddresses
        }
    }

    /// A complete response with a 2xx status.
    public struct Response: Equatable, Sendable {
        public var status: Int
        /// The reason phrase, printable ASCII only.
        public var reason: String
        public var headers: HTTPHeaders
        public var body: ByteBuffer

        /// The body's bytes.
        public var bodyBytes: [UInt8] { Array(self.body.readableBytesView) }
    }

    public let configuration: Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let tlsContexts: TLSContextCache
    private let logger: Logger

    /// - Parameter tlsContexts: shared TLS contexts; pass the XMPP client's cache to build
    ///   each trust store once.
    public init(configuration: Configuration, eventLoopGroup: any EventLoopGroup, tlsContexts: TLSContextCache = TLSContextCache(), logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.tlsContexts = tlsContexts
        self.logger = logger
    }

    /// Uploads `body` with PUT (RFC 9110 §9.3.4), `headers` added to the request (none
    /// of the fields the client sets itself). Returns the 2xx response; other statuses throw
    /// ``HTTPSClientError/unexpectedStatus(code:reason:host:)``.
    public func put(url: HTTPURL, headers: [HTTPHeaderField] = [], contentType: String?, body: ByteBuffer) async throws(HTTPSClientError) -> Response {
        let request = HTTPSRequest(method: .PUT, url: url, headers: headers, contentType: contentType, contentLength: body.readableBytes)
        return try await self.execute(request, body: body, maximumBodyBytes: self.configuration.maximumPutResponseBytes, requiresDelimitedBody: false)
    }

    /// ``put(url:headers:contentType:body:)`` for a URL given as text.
    public func put(url: String, headers: [HTTPHeaderField] = [], contentType: String?, body: ByteBuffer) async throws(HTTPSClientError) -> Response {
        try await self.put(url: self.parse(url), headers: headers, contentType: contentType, body: body)
    }

    /// Sends `body` with POST (RFC 9110 §9.3.3) and reads a response of at most
    /// `maxBytes` (an API's answer, such as Alertmanager's new silence id).
    public func post(url: String, contentType: String, body: ByteBuffer, maxBytes: Int = 64 * 1024) async throws(HTTPSClientError) -> Response {
        let request = HTTPSRequest(method: .POST, url: try self.parse(url), headers: [], contentType: contentType, contentLength: body.readableBytes)
        return try await self.execute(request, body: body, maximumBodyBytes: maxBytes, requiresDelimitedBody: false)
    }

    /// DELETE (RFC 9110 §9.3.5); the response's body is read up to `maxBytes`.
    public func delete(url: String, maxBytes: Int = 64 * 1024) async throws(HTTPSClientError) -> Response {
        let request = HTTPSRequest(method: .DELETE, url: try self.parse(url), headers: [], contentType: nil, contentLength: nil)
        return try await self.execute(request, body: nil, maximumBodyBytes: maxBytes, requiresDelimitedBody: false)
    }

    /// Downloads with GET (RFC 9110 §9.3.1); a body over `maxBytes` throws
    /// ``HTTPSClientError/responseTooLarge(limit:)`` (from `Content-Length` before reading,
    /// otherwise as soon as more arrived). The body must be delimited (`Content-Length` or
    /// chunked), so a cut connection cannot pass for the whole file.
    public func get(url: HTTPURL, maxBytes: Int, headers: [HTTPHeaderField] = []) async throws(HTTPSClientError) -> Response {
        let request = HTTPSRequest(method: .GET, url: url, headers: headers, contentType: nil, contentLength: nil)
        return try await self.execute(request, body: nil, maximumBodyBytes: max(0, maxBytes), requiresDelimitedBody: true)
    }

    /// ``get(url:maxBytes:headers:)`` for a URL given as text.
    public func get(url: String, maxBytes: Int, headers: [HTTPHeaderField] = []) async throws(HTTPSClientError) -> Response {
        try await self.get(url: self.parse(url), maxBytes: maxBytes, headers: headers)
    }

    // MARK: -

    private func parse(_ text: String) throws(HTTPSClientError) -> HTTPURL {
        do {
            return try HTTPURL(text, allowInsecureHTTP: self.configuration.allowInsecureHTTP)
        } catch {
            throw .invalidURL(error)
        }
    }

    private typealias Channel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    /// Connects, sends the request, reads the response, closes.
    private func execute(
        _ request: HTTPSRequest, body: ByteBuffer?, maximumBodyBytes: Int, requiresDelimitedBody: Bool
    ) async throws(HTTPSClientError) -> Response {
        let url = request.url
        if url.scheme == .http, !self.configuration.allowInsecureHTTP { throw .invalidURL(.insecureHTTP) }
        let head = try request.head()
        let channel = try await self.connect(url)
        let underlying = channel.channel
        // One deadline for the rest: handshake, request, response.
        let timedOut = NIOLockedValueBox(false)
        let timer = underlying.eventLoop.scheduleTask(in: .nanoseconds(self.configuration.requestTimeout.nanoseconds)) {
            timedOut.withLockedValue { $0 = true }
            underlying.close(promise: nil)
        }
        defer { timer.cancel() }
        let result: Result<Response, any Error>
        do {
            let response = try await withTaskCancellationHandler {
                try await channel.executeThenClose { inbound, outbound in
                    try await Self.exchange(
                        head: head, body: body, host: url.host, inbound: inbound, outbound: outbound,
                        collector: HTTPResponseCollector(maximumBodyBytes: maximumBodyBytes, requiresDelimitedBody: requiresDelimitedBody)
                    )
                }
            } onCancel: {
                underlying.close(promise: nil)
            }
            result = .success(response)
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let response):
            guard (200..<300).contains(response.status) else {
                throw .unexpectedStatus(code: response.status, reason: response.reason, host: url.host)
            }
            return response
        case .failure(let error):
            if timedOut.withLockedValue({ $0 }) { throw .timedOut(host: url.host) }
            if Task.isCancelled { throw .cancelled }
            throw Self.classify(error, host: url.host)
        }
    }

    /// A TCP connection (through TLS for `https`) with the HTTP codec on it.
    private func connect(_ url: HTTPURL) async throws(HTTPSClientError) -> Channel {
        let tlsContext: TLSContext?
        if url.scheme == .https {
            do {
                // Only DNS names count for HTTPS, not the XMPP identities an XMPP server's
                // certificate may carry instead.
                var tls = self.configuration.tls
                tls.acceptsXMPPIdentities = false
                tlsContext = try self.tlsContexts.context(for: tls)
            } catch {
                throw .tls(error)
            }
            if self.configuration.tls.certificateVerification == .insecureNoVerification {
                self.logger.warning("TLS certificate verification is DISABLED for this HTTPS request", metadata: ["host": "\(url.host)"])
            }
        } else {
            tlsContext = nil
        }
        let limits = {
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderListSize = self.configuration.maximumResponseHeaderBytes
            limits.maxHeaderFieldSize = self.configuration.maximumResponseHeaderBytes
            return limits
        }()
        let expectedHost = url.host
        let address = self.configuration.connectAddresses[url.host] ?? url.host
        self.logger.debug("HTTPS connecting", metadata: ["host": "\(url.host)", "address": "\(address)", "port": "\(url.port)"])
        let bootstrap = ClientBootstrap(group: self.eventLoopGroup)
            .connectTimeout(.nanoseconds(self.configuration.connectTimeout.nanoseconds))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        do {
            return try await bootstrap.connect(host: address, port: url.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsContext {
                        try pipeline.addHandler(TLSHandler(context: tlsContext, expectedHost: expectedHost))
                    }
                    try pipeline.addHandler(HTTPRequestEncoder())
                    try pipeline.addHandler(
                        ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop, limitConfiguration: limits))
                    )
                    try pipeline.addHandler(NIOHTTPRequestHeadersValidator())
                    return try Channel(wrappingChannelSynchronously: channel)
                }
            }
        } catch let error as TLSError {
            throw .tls(error)
        } catch {
            throw .connectFailed(host: url.host, port: url.port, reason: "\(error)")
        }
    }

    /// Writes the request and reads the response. A write that fails because the server
    /// answered early and closed (say 413) does not hide that answer: the response is read
    /// whatever happened to the write.
    private static func exchange(
        head: HTTPRequestHead,
        body: ByteBuffer?,
        host: String,
        inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>,
        outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>,
        collector: HTTPResponseCollector
    ) async throws -> Response {
        var collector = collector
        var writeError: (any Error)?
        do {
            try await outbound.write(.head(head))
            if var body {
                while body.readableBytes > 0, let chunk = body.readSlice(length: min(body.readableBytes, 64 * 1024)) {
                    try await outbound.write(.body(.byteBuffer(chunk)))
                }
            }
            try await outbound.write(.end(nil))
        } catch {
            writeError = error
        }
        for try await part in inbound {
            if let response = try collector.received(part) { return response }
        }
        throw writeError ?? HTTPSClientError.connectionClosed(host: host, reason: nil)
    }

    /// The typed error for what the channel reported.
    static func classify(_ error: any Error, host: String) -> HTTPSClientError {
        switch error {
        case let error as HTTPSClientError: error
        case let error as TLSError: .tls(error)
        case let error as HTTPParserError: .malformedResponse("\(error)")
        case let error as NIOTooManyBytesError: .malformedResponse("\(error)")
        default: .connectionClosed(host: host, reason: "\(error)")
        }
    }
}
