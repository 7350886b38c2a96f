import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Transports

/// Drains one transport's part of the durable queue, in order: takes a batch of pending
/// deliveries, hands it to the transport, and removes each delivery only when the
/// transport confirms it. While the transport is unavailable (offline, reconnecting) the
/// deliveries wait; a failed one (never deliverable) is removed and logged.
final class DeliveryWorker: Service, Sendable {
    let transport: any Transport
    private let store: StateStore
    private let batchSize: Int
    private let retryDelay: Duration
    private let logger: Logger
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private let state = NIOLockedValueBox((available: false, stopped: false))

    init(transport: any Transport, store: StateStore, batchSize: Int, retryDelay: Duration = .seconds(5), logger: Logger) {
        self.transport = transport
        self.store = store
        self.batchSize = batchSize
        self.retryDelay = retryDelay
        var logger = logger
        logger[metadataKey: "transport"] = "\(transport.name)"
        self.logger = logger
        (self.wakeups, self.wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// New deliveries were queued for this transport.
    func wake() {
        self.wakeup.yield()
    }

    /// The transport can (or cannot) deliver now.
    func setAvailable(_ available: Bool) {
        self.state.withLockedValue { $0.available = available }
        if available { self.wakeup.yield() }
    }

    /// Ends `run()` (the transport was removed by a reload).
    func stop() {
        self.state.withLockedValue { $0.stopped = true }
        self.wakeup.finish()
    }

    var isAvailable: Bool { self.state.withLockedValue { $0.available } }

    func run() async throws {
        self.wakeup.yield()  // whatever a previous run left in the queue
        await cancelWhenGracefulShutdown {
            for await _ in self.wakeups {
                await self.drain()
            }
        }
    }

    /// Delivers until the queue is empty, the transport is unavailable, or it asks to retry.
    private func drain() async {
        while self.isAvailable, !Task.isCancelled, !Task.isShuttingDownGracefully {
            let batch: [Delivery]
            do {
                batch = try self.store.pending(transport: self.transport.name, limit: self.batchSize)
            } catch {
                self.logger.error("cannot read the queue", metadata: ["error": "\(error)"])
                return self.retryLater()
            }
            guard !batch.isEmpty else { return }
            let results = await self.transport.deliver(batch)
            var retry: String?
            for (delivery, result) in zip(batch, results) {
                switch result {
                case .delivered:
                    self.complete(delivery)
                case .failed(let reason):
                    self.logger.error("delivery failed; dropped", metadata: ["target": "\(delivery.target)", "reason": "\(reason)"])
                    self.complete(delivery)
                case .retryLater(let reason):
                    retry = reason
                }
                if retry != nil { break }
            }
            if let retry {
                self.logger.info("delivery postponed", metadata: ["reason": "\(retry)"])
                return self.retryLater()
            }
        }
    }

    private func complete(_ delivery: Delivery) {
        do {
            try self.store.complete(sequence: delivery.sequence)
        } catch {
            self.logger.error("cannot remove a delivered item from the queue", metadata: ["error": "\(error)"])
        }
    }

    private func retryLater() {
        let delay = self.retryDelay
        let wakeup = self.wakeup
        Task {
            try? await Task.sleep(for: delay)
            wakeup.yield()
        }
    }
}
