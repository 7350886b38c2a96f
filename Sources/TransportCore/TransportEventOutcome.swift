/// What the bridge did with an event.
public enum TransportEventOutcome: Hashable, Sendable {
    case accepted
    case dropped(String)
    /// The same notification was accepted lately under this id (an Alertmanager HA pair
    /// sending it from each replica): nothing more is relayed.
    case duplicate(of: String)
}
