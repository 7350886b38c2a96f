/// Which way a carbon copy went (XEP-0280 §5): a message another of our clients
/// received, or one it sent.
public enum CarbonDirection: Hashable, Sendable {
    case received
    case sent
}
