/// What a transport reports to the bridge.
public enum TransportEvent: Sendable {
    /// A message for the router.
    case message(InboundMessage)
    /// The transport can deliver now (connected, or a local output ready): flush its queue.
    case available
    /// The transport cannot deliver for now (offline, reconnecting); queued deliveries wait.
    case unavailable(reason: String?)
    /// The transport's input has ended for good (stdin closed) and it asks the bridge to
    /// finish queued deliveries and stop.
    case inputFinished
}
