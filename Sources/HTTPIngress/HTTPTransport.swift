import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LocalArchive
import LocalTransport
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
import TransportCore
#endif

/// The HTTP ingress local transport (`[local.NAME] kind = "http"`): curl, Alertmanager,
/// Grafana and any webhook sender post messages into channels (see ``IngressRoute``).
/// Built on Hummingbird 2 over the bridge's event loops; plain HTTP/1.1 on a loopback
/// address or a Unix socket (TLS is a reverse proxy's job). Input only: deliveries to it
/// are accepted and dropped (configuration keeps it out of receiving members).
///
/// Every request is checked in this order: path (404/405), bearer token (401, RFC 6750),
/// body size (413, from `Content-Length` before reading and while reading), then the
/// ``IngressResponder`` (400/415/422, 202 after the durable commit).
public final class HTTPTransport: Transport {
    public let name: String
    private let options: HTTPIngressOptions
    private let responder: IngressResponder
    private let group: any EventLoopGroup
    private let handler: any TransportEventHandler
    private let metrics: any MetricsFactory
    private let logger: Logger
    private let stopSignal = StopSignal()
    /// Set when `run()` has returned: the listener is closed.
    private let finished = StopSignal()

    public init(
        name: String, options: HTTPIngressOptions, group: any EventLoopGroup, handler: any TransportEventHandler,
        status: (any DeliveryStatusProviding)?, channels: @escaping @Sendable () -> Set<String>,
        template: @escaping @Sendable (String) -> WebhookTemplate?, makeID: @escaping @Sendable () -> String,
        archive: (any ArchiveReading)? = nil, metrics: any MetricsFactory, logger: Logger
    ) {
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.name = name
        self.options = options
        self.group = group
        self.handler = handler
        self.metrics = metrics
        self.logger = logger
        self.responder = IngressResponder(
            name: name, nick: options.nick, waitTimeout: options.waitTimeout, handler: handler, status: status, channels: channels,
            template: template, makeID: makeID, stopping: self.stopSignal, archive: archive, logger: logger
        )
    }

    public func run() async throws {
        defer { self.finished.stop() }
        let socket: StagedUnixSocket?
        let address: BindAddress
        do {
            switch self.options.listen {
            case .host(let host, let port):
                socket = nil
                address = .hostname(host, port: port)
            case .unixSocket(let path):
                let staged = try StagedUnixSocket(path: path)
                socket = staged
                address = .unixDomainSocket(path: staged.stagedPath)
            }
        } catch {
            try await self.failed(error)
        }
        let app = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await self.respond(to: request) },
            // An idle or slow client is dropped after idle_timeout; at most max_connections at
            // once, so clients that never finish cannot exhaust descriptors.
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: TimeAmount(self.options.idleTimeout))),
            configuration: ApplicationConfiguration(
                address: address, serverName: nil,
                availableConnectionsDelegate: .maximum(self.options.maxConnections, logger: self.logger)
            ),
            onServerRunning: { _ in await self.listening(socket: socket) },
            eventLoopGroupProvider: .shared(self.group),
            logger: self.logger
        )
        let server = ServiceGroup(configuration: .init(services: [app], logger: self.logger))
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await server.run() }
                    // stop() (a reload) or the bridge's shutdown: the server stops accepting,
                    // and requests held by ?wait=sent are answered at once.
                    group.addTask {
                        await self.stopSignal.wait()
                        await server.triggerGracefulShutdown()
                    }
                    // Whichever ends first (or throws), the other is ended too.
                    defer { self.stopSignal.stop() }
                    try await group.next()
                }
            } onGracefulShutdown: {
                self.stopSignal.stop()
            }
        } catch {
            socket?.removeStaging()
            try await self.failed(error)
        }
        socket?.removeIfOurs()
    }

    /// Reports that the ingress does not serve, and ends `run()` with `error`.
    private func failed(_ error: any Error) async throws -> Never {
        self.logger.error("http ingress not served", metadata: ["listen": "\(self.options.listen)", "error": "\(error)"])
        await self.handler.handle(.unavailable(reason: "\(error)"), from: self.name)
        throw error
    }

    /// Stops serving and returns once the listener is closed (a successor can bind).
    public func stop() async {
        self.stopSignal.stop()
        await self.finished.wait()
    }

    /// Input only: nothing to show a delivery to.
    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        deliveries.map { _ in .delivered }
    }

    // MARK: Requests

    private func respond(to request: Request) async -> Response {
        let answer = await self.answer(request)
        Counter(label: "xmpp_bridge_http_requests_total", dimensions: [("local", self.name), ("status", "\(answer.status)")], factory: self.metrics)
            .increment()
        if answer.status >= 400 {
            self.logger.info(
                "http request refused",
                metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(answer.status)", "reason": "\(answer.json)"]
            )
        }
        var headers: HTTPFields = [.contentType: "application/json"]
        if answer.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"xmpp-bridge\"" }
        if answer.status == 405, let allowed = IngressRoute.allowedMethods(path: request.uri.path) { headers[.allow] = allowed }
        var body = ByteBuffer(string: answer.json)
        body.writeString("\n")
        return Response(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ResponseBody(byteBuffer: body))
    }

    private func answer(_ request: Request) async -> IngressResponder.Answer {
        let route: IngressRoute
        switch IngressRoute.match(method: request.method.rawValue, path: request.uri.path) {
        case .success(let matched): route = matched
        case .failure(let error): return IngressResponder.Answer(status: error.status, json: error.json)
        }
        if let token = self.options.token, !token.accepts(authorization: request.headers[.authorization]) {
            return IngressResponder.Answer(status: 401, json: IngressError.unauthorized().json)
        }
        var body: [UInt8] = []
        if case .status = route {
            // GET: no body to read.
        } else {
            let limit = self.options.maxBodyBytes
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
                return IngressResponder.Answer(status: 413, json: IngressError.tooLarge(limit: limit).json)
            }
            do {
                for try await part in request.body {
                    guard body.count + part.readableBytes <= limit else {
                        return IngressResponder.Answer(status: 413, json: IngressError.tooLarge(limit: limit).json)
                    }
                    body += part.readableBytesView
                }
            } catch {
                return IngressResponder.Answer(status: 400, json: IngressError.badRequest("body not read: \(error)").json)
            }
        }
        var query: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
        let headers = request.headers
        return await self.responder.respond(to: route, query: query, header: { name in
            HTTPField.Name(name).flatMap { headers[$0] }
        }, body: body)
    }

    // MARK: Listening

    private func listening(socket: StagedUnixSocket?) async {
        if let socket {
            do {
                try socket.place(mode: self.options.socketMode)
            } catch {
                self.logger.error("http ingress not served", metadata: ["listen": "\(self.options.listen)", "error": "\(error)"])
                await self.handler.handle(.unavailable(reason: "\(error)"), from: self.name)
                self.stopSignal.stop()
                return
            }
        }
        self.logger.info("http ingress listening", metadata: ["listen": "\(self.options.listen)", "token": "\(self.options.token == nil ? "none" : "required")"])
        await self.handler.handle(.available, from: self.name)
    }
}
