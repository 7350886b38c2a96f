/// Receives a transport's events. Transports await each call before reading more
/// input, so a slow bridge slows its inputs down instead of buffering without bound.
public protocol TransportEventHandler: Sendable {
    /// Handles one event; for messages, says whether the bridge took it (so a local client
    /// can be told why not).
    @discardableResult
    func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome
}
