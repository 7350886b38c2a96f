import TransportCore
import XMPP

/// How the bridge's terms map to stanzas and back, for every transport that speaks XMPP
/// (accounts and the gateway): message types (RFC 6121 §5.2.2), presence (RFC 6121 §4.7,
/// XEP-0153 §3.2).
public enum StanzaMapping {
    /// The XMPP message type for a delivery type (RFC 6121 §5.2.2).
    public static func messageKind(_ type: RelayChannel.DeliveryType) -> Message.Kind {
        switch type {
        case .chat: .chat
        case .normal: .normal
        case .headline: .headline
        }
    }

    /// The bridge's name for a 1:1 message type; nil for room messages and errors.
    public static func deliveryType(_ kind: Message.Kind) -> RelayChannel.DeliveryType? {
        switch kind {
        case .chat: .chat
        case .normal: .normal
        case .headline: .headline
        case .groupchat, .error: nil
        }
    }

    /// The `<show/>` for an availability (RFC 6121 §4.7.2.1); none for plain available.
    public static func show(_ availability: PresenceState.Availability) -> Presence.Show? {
        switch availability {
        case .chat: .chat
        case .away: .away
        case .xa: .xa
        case .dnd: .dnd
        case .available, .unavailable: nil
        }
    }

    /// What the bridge relays of a presence (RFC 6121 §4.7): availability, status and the
    /// avatar hash; no presence, or any but available, is unavailable.
    public static func state(_ presence: Presence?) -> PresenceState {
        guard let presence, presence.type == .available else { return .unavailable }
        let availability: PresenceState.Availability
        switch presence.show {
        case .none: availability = .available
        case .chat: availability = .chat
        case .away: availability = .away
        case .xa: availability = .xa
        case .dnd: availability = .dnd
        }
        return PresenceState(availability: availability, status: presence.status, avatar: PhotoUpdate.hash(in: presence))
    }
}
