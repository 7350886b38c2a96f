import TransportCore
import XMPP

/// A contact's presence as the bridge reads it (RFC 6121 §4.7, XEP-0153 §3.2).
extension XMPPTransport {
    /// What the bridge relays of a presence (RFC 6121 §4.7): availability, status and the
    /// avatar hash; no presence, or any but available, is unavailable.
    static func state(_ presence: Presence?) -> PresenceState {
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
