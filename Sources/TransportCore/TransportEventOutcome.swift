/// What the bridge did with an event.
public enum TransportEventOutcome: Hashable, Sendable {
    case accepted
    case dropped(String)
}
