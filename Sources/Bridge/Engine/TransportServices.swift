import BridgeRelay
import Logging
import ServiceLifecycle
import Synchronization

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
///
/// A transport runs in a child task; a delivery worker has none (it starts a task only
/// while it has work, issue 43): it is started here, kept in a table until it stops, and
/// told of the shutdown with the transports.
package final class TransportServices: Service, Sendable {
    /// A transport or its worker, and the name a slow shutdown gives it.
    package struct Part: Sendable {
        /// A service run in a child task (a transport), or a worker that needs none.
        enum Kind: Sendable {
            case service(any Service)
            case worker(DeliveryWorker<ContinuousClock>)
        }

        let name: String
        let kind: Kind

        static func service(_ service: any Service, name: String) -> Part { Part(name: name, kind: .service(service)) }
        static func worker(_ worker: DeliveryWorker<ContinuousClock>, name: String) -> Part { Part(name: name, kind: .worker(worker)) }
    }

    /// The services to start, the first ones included: held only until started, so a
    /// transport stopped later is not kept alive from here.
    private let additions: AsyncStream<Part>
    private let continuation: AsyncStream<Part>.Continuation
    /// The workers started and not stopped, by identity, with their names.
    private let workers = Mutex<[ObjectIdentifier: (name: String, worker: DeliveryWorker<ContinuousClock>)]>([:])
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
                for await part in self.additions {
                    // Added just before the shutdown began: not started at all.
                    guard !Task.isShuttingDownGracefully else { continue }
                    switch part.kind {
                    case .service(let service): group.addTask { await self.run(service, name: part.name) }
                    case .worker(let worker): self.start(worker, name: part.name)
                    }
                }
            } onGracefulShutdown: {
                self.continuation.finish()
                for (_, entry) in self.workers.withLock({ $0 }) { entry.worker.close() }
            }
            // Shutting down: each worker's batches in flight answered, all at once.
            for (_, entry) in self.workers.withLock({ $0 }) {
                group.addTask {
                    await self.progress.running(entry.name) {
                        entry.worker.close()
                        await entry.worker.settled()
                    }
                }
            }
        }
    }

    /// The workers started and not stopped.
    var workerCount: Int { self.workers.withLock { $0.count } }

    private func start(_ worker: DeliveryWorker<ContinuousClock>, name: String) {
        let key = ObjectIdentifier(worker)
        self.workers.withLock { $0[key] = (name, worker) }
        worker.start { [weak self] in
            _ = self?.workers.withLock { $0.removeValue(forKey: key) }
        }
    }

    /// Runs a transport in this task, which keeps the deepest stack of async frames it ever
    /// ran for the transport's life (docs/performance.md): the log line is made outside.
    private func run(_ service: any Service, name: String) async {
        do {
            try await self.progress.running(name) { try await service.run() }
        } catch {
            self.failed(name, error)
        }
    }

    @inline(never)
    private func failed(_ name: String, _ error: any Error) {
        // As the group's own `.ignore`: the others keep running.
        self.logger.error("transport service failed", metadata: ["service": "\(name)", "error": "\(error)"])
    }
}
