import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
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
    private let server = NIOLockedValueBox<ServiceGroup?>(nil)
    private let stopSignal = StopSignal()

    public init(
        name: String, options: HTTPIngressOptions, group: any EventLoopGroup, handler: any TransportEventHandler,
        status: (any DeliveryStatusProviding)?, channels: @escaping @Sendable () -> Set<String>,
        template: @escaping @Sendable (String) -> WebhookTemplate?, makeID: @escaping @Sendable () -> String,
        metrics: any MetricsFactory, logger: Logger
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
            template: template, makeID: makeID, logger: logger
        )
    }

    public func run() async throws {
        let socket = try self.prepareSocket()
        let address: BindAddress
        switch self.options.listen {
        case .host(let host, let port): address = .hostname(host, port: port)
        case .unixSocket: address = .unixDomainSocket(path: socket?.staged ?? "")
        }
        let app = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await self.respond(to: request) },
            // An idle or slow client is dropped after 30 s; at most 256 connections at once,
            // so a flood of clients that never finish cannot exhaust descriptors.
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: .seconds(30))),
            configuration: ApplicationConfiguration(
                address: address, serverName: nil, availableConnectionsDelegate: .maximum(256, logger: self.logger)
            ),
            onServerRunning: { _ in await self.listening(socket: socket) },
            eventLoopGroupProvider: .shared(self.group),
            logger: self.logger
        )
        let server = ServiceGroup(configuration: .init(services: [app], logger: self.logger))
        self.server.withLockedValue { $0 = server }
        let stopper = Task {
            await self.stopSignal.wait()
            await server.triggerGracefulShutdown()
        }
        defer { stopper.cancel() }
        do {
            try await withGracefulShutdownHandler {
                try await server.run()
            } onGracefulShutdown: {
                self.stopSignal.stop()
            }
        } catch {
            self.logger.error("http ingress not served", metadata: ["listen": "\(self.options.listen)", "error": "\(error)"])
            await self.handler.handle(.unavailable(reason: "\(error)"), from: self.name)
            socket.map { Self.removeStaging($0) }
            throw error
        }
        if let socket { Self.removeIfOurs(socket) }
    }

    public func stop() async {
        self.stopSignal.stop()
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

    // MARK: Unix socket

    /// A Unix socket listener binds in a private folder beside its path and is moved into
    /// place with its mode set, so no one can connect while its mode is wider.
    private struct SocketPlacement {
        var path: String
        var folder: String
        var staged: String { self.folder + "/s" }
        var inode: NIOLockedValueBox<ino_t> = NIOLockedValueBox(0)
    }

    private func prepareSocket() throws -> SocketPlacement? {
        guard case .unixSocket(let path) = self.options.listen else { return nil }
        let lines = UnixLineServer(path: path, mode: self.options.socketMode, splitter: LineSplitter(maxLineBytes: 1, invalidUTF8: .reject))
        try lines.prepare()
        return SocketPlacement(path: path, folder: try lines.makeStagingFolder())
    }

    private func listening(socket: SocketPlacement?) async {
        if let socket {
            guard chmod(socket.staged, mode_t(self.options.socketMode)) == 0, link(socket.staged, socket.path) == 0 else {
                let reason = String(cString: strerror(errno))
                self.logger.error("cannot put the http socket in place", metadata: ["path": "\(socket.path)", "error": "\(reason)"])
                Self.removeStaging(socket)
                self.stopSignal.stop()
                return
            }
            Self.removeStaging(socket)
            var placed = stat()
            if lstat(socket.path, &placed) == 0 { socket.inode.withLockedValue { $0 = placed.st_ino } }
        }
        self.logger.info("http ingress listening", metadata: ["listen": "\(self.options.listen)", "token": "\(self.options.token == nil ? "none" : "required")"])
        await self.handler.handle(.available, from: self.name)
    }

    private static func removeStaging(_ socket: SocketPlacement) {
        unlink(socket.staged)
        rmdir(socket.folder)
    }

    /// Removes the socket file only if it is still ours (a successor may have bound anew).
    private static func removeIfOurs(_ socket: SocketPlacement) {
        var current = stat()
        let inode = socket.inode.withLockedValue { $0 }
        if inode != 0, lstat(socket.path, &current) == 0, current.st_ino == inode { unlink(socket.path) }
    }
}
