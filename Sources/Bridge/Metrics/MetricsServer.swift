import CoreMetrics
import Foundation
import HTTPIngress
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LocalTransport
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import TransportCore

/// Serves `[bridge] metrics_listen`: `GET /metrics` in the Prometheus text format
/// (swift-prometheus's registry, filled through swift-metrics by ``RelayMetrics`` and the
/// HTTP ingress), `GET /health/live` (the process answers) and `GET /health/ready`
/// (``BridgeRuntime/health()``: 200 or 503 with the reasons). Gauges of state (queue
/// depth, oldest queued, dead letters, connected, leases) are set from the runtime at each
/// scrape.
package struct MetricsServer: Service {
    package let listen: HTTPListenAddress
    package let registry: PrometheusCollectorRegistry
    package let factory: any MetricsFactory
    package let runtime: BridgeRuntime
    package let group: any EventLoopGroup
    package let logger: Logger

    package func run() async throws {
        let address: BindAddress
        var socket: StagedUnixSocket?
        switch self.listen {
        case .host(let host, let port): address = .hostname(host, port: port)
        case .unixSocket(let path):
            // A stale socket file is replaced; anything else at the path is refused.
            do {
                socket = try StagedUnixSocket(path: path)
            } catch {
                self.logger.error("metrics not served", metadata: ["listen": "\(self.listen)", "error": "\(error)"])
                throw error
            }
            address = .unixDomainSocket(path: socket?.stagedPath ?? path)
        }
        let staged = socket
        defer {
            staged?.removeStaging()
            staged?.removeIfOurs()
        }
        let app = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await self.respond(to: request) },
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: .seconds(30))),
            configuration: ApplicationConfiguration(address: address, serverName: nil, availableConnectionsDelegate: .maximum(64, logger: self.logger)),
            onServerRunning: { _ in
                do {
                    try staged?.place(mode: 0o600)
                    self.logger.info("metrics listening", metadata: ["listen": "\(self.listen)"])
                } catch {
                    self.logger.error("metrics not served", metadata: ["listen": "\(self.listen)", "error": "\(error)"])
                }
            },
            eventLoopGroupProvider: .shared(self.group),
            logger: self.logger
        )
        do {
            try await app.run()
        } catch {
            self.logger.error("metrics not served", metadata: ["listen": "\(self.listen)", "error": "\(error)"])
            throw error
        }
    }

    private func respond(to request: Request) async -> Response {
        guard request.method == .get || request.method == .head else {
            return Self.json(405, "{\"error\":\"method not allowed; use GET\"}")
        }
        switch request.uri.path {
        case "/metrics":
            await self.updateGauges()
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16 * 1024)
            self.registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer))
            )
        case "/health/live":
            return Self.json(200, "{\"status\":\"live\"}")
        case "/health/ready":
            let report = await self.runtime.health()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let body = (try? encoder.encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return Self.json(report.ready ? 200 : 503, body)
        default:
            return Self.json(404, "{\"error\":\"no such path; use /metrics, /health/live or /health/ready\"}")
        }
    }

    private static func json(_ status: Int, _ body: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body + "\n"))
        )
    }

    /// Snapshot gauges, per transport.
    private func updateGauges() async {
        let report = await self.runtime.health()
        for transport in report.transports {
            let dimensions = [("transport", transport.name)]
            Gauge(label: "xmpp_bridge_queue_depth", dimensions: dimensions, factory: self.factory).record(transport.queued)
            Gauge(label: "xmpp_bridge_queue_oldest_age_seconds", dimensions: dimensions, factory: self.factory).record(transport.oldestAgeSeconds ?? 0)
            Gauge(label: "xmpp_bridge_dead_letters", dimensions: dimensions, factory: self.factory).record(transport.dead)
            Gauge(label: "xmpp_bridge_transport_connected", dimensions: dimensions + [("kind", transport.kind)], factory: self.factory)
                .record(transport.connected ? 1 : 0)
            Gauge(label: "xmpp_bridge_transport_stopped", dimensions: dimensions, factory: self.factory).record(transport.stopped ? 1 : 0)
        }
        Gauge(label: "xmpp_bridge_ready", dimensions: [], factory: self.factory).record(report.ready ? 1 : 0)
        // Several instances (PostgreSQL): this instance's leases, and work nobody runs. What
        // only the shared state can tell is left out of a scrape it did not answer, not shown
        // as it last was.
        if let leases = await self.runtime.leaseCounts() {
            Gauge(label: "xmpp_bridge_leases_held", dimensions: [], factory: self.factory).record(leases.held)
            for (label, value) in [("xmpp_bridge_leases_unowned", leases.unowned), ("xmpp_bridge_instances_alive", leases.alive)] {
                let gauge = Gauge(label: label, dimensions: [], factory: self.factory)
                if let value { gauge.record(value) } else { gauge.destroy() }
            }
        }
    }

    package init(listen: HTTPListenAddress, registry: PrometheusCollectorRegistry, factory: any MetricsFactory, runtime: BridgeRuntime, group: any EventLoopGroup, logger: Logger) {
        self.listen = listen
        self.registry = registry
        self.factory = factory
        self.runtime = runtime
        self.group = group
        self.logger = logger
    }
}
