import Foundation

/// How far one message a local input handed over has come, per target and in all: queued
/// in the bridge, sent (the target's server took it), received (the recipient's client
/// sent a receipt, XEP-0184 §5.2), displayed (a displayed marker, XEP-0333 §4) or failed
/// (a dead letter). Answered by `GET /messages/{id}` of the HTTP ingress.
public struct MessageDeliveryStatus: Hashable, Sendable, Codable {
    /// Ordered: a later state implies the earlier ones.
    public enum State: String, Hashable, Sendable, Codable, Comparable {
        case failed
        case queued
        case sent
        case received
        case displayed

        private var rank: Int {
            switch self {
            case .failed: 0
            case .queued: 1
            case .sent: 2
            case .received: 3
            case .displayed: 4
            }
        }

        public static func < (lhs: State, rhs: State) -> Bool { lhs.rank < rhs.rank }
    }

    /// One relayed copy.
    public struct Target: Hashable, Sendable, Codable {
        /// `transport` or `transport:address`.
        public var target: String
        public var state: State
        /// Why it failed, for a dead letter.
        public var error: String?

        public init(target: String, state: State, error: String? = nil) {
            self.target = target
            self.state = state
            self.error = error
        }
    }

    public var id: String
    public var channel: String
    /// The least advanced of the XMPP targets (every target when none is an account):
    /// "received" means every phone has it. Any failed target makes it `failed`.
    public var state: State
    public var targets: [Target]

    public init(id: String, channel: String, state: State, targets: [Target]) {
        self.id = id
        self.channel = channel
        self.state = state
        self.targets = targets
    }

    /// The overall state of `targets`, where `accountTargets` says which count for it.
    public static func overall(_ targets: [Target], counts: (Target) -> Bool) -> State {
        if targets.contains(where: { $0.state == .failed }) { return .failed }
        let counted = targets.filter(counts)
        return (counted.isEmpty ? targets : counted).map(\.state).min() ?? .queued
    }
}
