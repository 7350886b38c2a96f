import Logging
import ServiceLifecycle

/// The transports' services (each transport and its delivery worker) run as one service of
/// the process's group, told of a graceful shutdown (SIGTERM) all at once.
///
/// The service group tells its services one after another, each only once the one before
/// it has returned, and fails if one returns before its turn. Two services per transport
/// in the group made a shutdown as long as the sum of every stream's close: 10,000
/// accounts on ejabberd, which answers `</stream:stream>` (RFC 6120 §4.4) after about
/// 100 ms, took more than a quarter of an hour. Here every transport closes its stream
/// and every worker waits for its batch in flight at the same time. A transport added
/// later (reload, a lease taken over) joins them; one that ends is left out.
package final class TransportServices: Service, Sendable {
    /// A transport or its worker, and the name a slow shutdown gives it.
    package struct Part: Sendable {
        let name: String
        let service: any Service
    }

    /// The services to start, the first ones included: held only until started, so a
    /// transport stopped later is not kept alive from here.
    private let additions: AsyncStream<Part>
    private let continuation: AsyncStream<Part>.Continuation
    private let progress: StopProgress<ContinuousClock>
    private let logger: Logger

    init(_ services: [Part], progress: StopProgress<ContinuousClock>, logger: Logger) {
        (self.additions, self.continuation) = AsyncStream.makeStream(of: Part.self)
        self.progress = progress
        self.logger = logger
        for service in services { self.continuation.yield(service) }
    }

    /// Runs `service` with the others; ignored once the shutdown began.
    func add(_ service: Part) {
        self.continuation.yield(service)
    }

    package func run() async {
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                for await service in self.additions { group.addTask { await self.run(service) } }
            } onGracefulShutdown: {
                self.continuation.finish()
            }
        }
    }

    private func run(_ part: Part) async {
        do {
            try await self.progress.running(part.name) { try await part.service.run() }
        } catch {
            // As the group's own `.ignore`: the others keep running.
            self.logger.error("transport service failed", metadata: ["service": "\(part.name)", "error": "\(error)"])
        }
    }
}
