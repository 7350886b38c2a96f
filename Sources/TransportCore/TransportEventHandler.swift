/// Receives a transport's events. Transports await each call before reading more
/// input, so a slow bridge slows its inputs down instead of buffering without bound.
public protocol TransportEventHandler: Sendable {
    /// Handles one event; for messages, says whether the bridge took it (so a local client
    /// can be told why not).
    @discardableResult
    func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome

    /// Returns once everything handed over so far is durable (the bridge's journal commit).
    func barrier() async
}

extension TransportEventHandler {
    /// Returns once everything handed over so far is durable (the bridge's journal commit);
    /// a transport acknowledges its source only after it (XEP-0198 `<a h/>`).
    public func barrier() async {}
}
