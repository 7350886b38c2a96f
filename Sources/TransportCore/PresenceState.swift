/// A presence reduced to what the bridge relays (RFC 6121 §4.7): how available someone
/// is, their status text and, where the protocol says, which avatar they show (XEP-0153
/// §3.2's photo hash). Availability is ordered so the most available wins:
/// chat > available > away > xa > dnd > unavailable.
public struct PresenceState: Hashable, Sendable, Codable {
    public enum Availability: Int, Hashable, Sendable, Codable, Comparable, CaseIterable, CustomStringConvertible {
        case unavailable = 0
        case dnd = 1
        case xa = 2
        case away = 3
        case available = 4
        case chat = 5

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .unavailable: "unavailable"
            case .dnd: "dnd"
            case .xa: "xa"
            case .away: "away"
            case .available: "available"
            case .chat: "chat"
            }
        }
    }

    public var availability: Availability
    public var status: String?
    /// The avatar shown (XEP-0153: the SHA-1 of the vCard photo, hex): nil when the presence
    /// says nothing of it, empty when it says there is none.
    public var avatar: String?

    public init(availability: Availability, status: String? = nil, avatar: String? = nil) {
        self.availability = availability
        self.status = status
        self.avatar = avatar
    }

    /// This presence without its avatar: how available and what status, which is what a
    /// presence notice or a mirrored presence tells.
    public var withoutAvatar: PresenceState {
        PresenceState(availability: self.availability, status: self.status)
    }

    public static let unavailable = PresenceState(availability: .unavailable)
}
