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

    /// Ends `run()` (the transport was removed by a reload); no further batch is taken.
    func stop() {
        self.state.withLockedValue {
            $0.stopped = true
            $0.available = false
        }
        self.wakeup.finish()
    }

    var isAvailable: Bool { self.state.withLockedValue { $0.available && !$0.stopped } }

    func run() async throws {
        self.wakeup.yield()  // whatever a previous run left in the queue
        // On graceful shutdown the batch in flight finishes (so it is not sent twice after a
        // restart); no new batch starts.
        await withGracefulShutdownHandler {
            for await _ in self.wakeups {
                await self.drain()
            }
        } onGracefulShutdown: {
            self.wakeup.finish()
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
            if results.count != batch.count {
                retry = "the transport answered \(results.count) of \(batch.count) deliveries"
            }
            // Everything up to the first "retry later" is done with; removed in one transaction.
            var done: [Int64] = []
            for (delivery, result) in zip(batch, results) where retry == nil {
                switch result {
                case .delivered:
                    done.append(delivery.sequence)
                case .failed(let reason):
                    self.logger.error("delivery failed; dropped", metadata: ["target": "\(delivery.target)", "reason": "\(reason)"])
                    done.append(delivery.sequence)
                case .retryLater(let reason):
                    retry = reason
                }
            }
            if !self.complete(done) { retry = retry ?? "cannot update the queue" }
            if let retry {
                self.logger.info("delivery postponed", metadata: ["reason": "\(retry)"])
                return self.retryLater()
            }
            // A short batch emptied the queue; anything queued meanwhile has woken us again.
            if batch.count < self.batchSize { return }
        }
    }

    /// Removes confirmed deliveries; false if the database refused (then back off rather
    /// than resend the batch in a tight loop).
    private func complete(_ sequences: [Int64]) -> Bool {
        do {
            try self.store.complete(sequences: sequences)
            return true
        } catch {
            self.logger.error("cannot remove a delivered item from the queue", metadata: ["error": "\(error)"])
            return false
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
