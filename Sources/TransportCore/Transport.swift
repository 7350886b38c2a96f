import ServiceLifecycle

/// One protocol the router talks to: it reports what arrives, tagged with the endpoint
/// it came from, and takes deliveries, saying for each whether it was delivered, should
/// be retried later, or failed for good. Kinds: XMPP (one per account) and local
/// (stdin/stdout, FIFO, Unix socket).
///
/// A transport is a `Service`: `run()` lives until the transport is stopped or the
/// service group shuts down gracefully.
public protocol Transport: Service {
    /// The configured name; also the `transport` of its endpoints.
    var name: String { get }

    /// Hands `deliveries` over, in order, and says what became of each (same order).
    /// A delivery counts as delivered only when the other side has taken it.
    func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult]

    /// ``deliver(_:)``, calling `written` once the batch is handed over (written to the
    /// connection, or answered without writing) and before waiting for the other side's
    /// acknowledgement or round trip: the caller may then hand over the next batch while this one waits, so
    /// batches in flight keep the link busy. Called exactly once, before returning.
    func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult]

    /// Ends `run()` soon (used when a reload removes or replaces this transport).
    func stop() async

    /// Where this transport's work prefers to run (SE-0417): its connection's event loop,
    /// so the bridge's tasks for it (its delivery worker) do not cross threads to reach
    /// its socket. Nil: Swift's global pool.
    var executor: (any TaskExecutor)? { get }
}

extension Transport {
    public var executor: (any TaskExecutor)? { nil }

    /// A transport whose deliveries are taken as it writes them: written once answered.
    public func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult] {
        let results = await self.deliver(deliveries)
        written()
        return results
    }
}
