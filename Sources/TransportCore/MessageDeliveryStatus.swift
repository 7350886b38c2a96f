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

    /// An escalation: the alert went to the next tier (issue 24).
    public struct Escalation: Hashable, Sendable, Codable {
        /// The tier's members, `transport:address`.
        public var to: [String]
        public var at: Date

        public init(to: [String], at: Date) {
            self.to = to
            self.at = at
        }

        enum CodingKeys: String, CodingKey {
            case to, at
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.to, forKey: .to)
            try container.encode(AlertAck.timestamp(self.at), forKey: .at)
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.to = try container.decode([String].self, forKey: .to)
            let text = try container.decode(String.self, forKey: .at)
            self.at = ISO8601DateFormatter().date(from: text) ?? Date(timeIntervalSince1970: 0)
        }
    }

    public var id: String
    public var channel: String
    /// The message's priority, 1 to 5 (3 when its sender did not say).
    public var priority: Int?
    /// Who acknowledged it, when and how; nil while nobody has (or it is no alert of a
    /// paging channel). Encoded as `null` then.
    public var ack: AlertAck?
    /// The tiers it was escalated to, in order.
    public var escalations: [Escalation]?
    /// The least advanced of the XMPP targets (every target when none is an account):
    /// "received" means every phone has it. Any failed target makes it `failed`.
    public var state: State
    public var targets: [Target]

    enum CodingKeys: String, CodingKey {
        case id, channel, priority, ack = "acknowledged", escalations, state, targets
    }

    /// `acknowledged` is written as null when the message is an alert nobody took yet.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.channel, forKey: .channel)
        try container.encode(self.state, forKey: .state)
        try container.encode(self.targets, forKey: .targets)
        try container.encodeIfPresent(self.priority, forKey: .priority)
        if self.priority != nil {
            try container.encode(self.ack, forKey: .ack)
            try container.encode(self.escalations ?? [], forKey: .escalations)
        }
    }

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
