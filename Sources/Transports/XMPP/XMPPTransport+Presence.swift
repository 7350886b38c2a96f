import Foundation
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
        return PresenceState(availability: availability, status: presence.status, avatar: Self.avatarHash(presence))
    }

    /// XEP-0153 §3.2: the photo hash a presence advertises; nil when it has no
    /// `vcard-temp:x:update` (or only an invalid one), empty when it says there is no photo.
    static func avatarHash(_ presence: Presence) -> String? {
        guard let update = presence.extensions.first(where: { $0.name == "x" && $0.namespace == "vcard-temp:x:update" }),
            let photo = update.firstChild(named: "photo", namespace: "vcard-temp:x:update")
        else { return nil }
        let hash = photo.text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        // A SHA-1 in hex, or nothing: anything else is not passed on.
        guard hash.isEmpty || (hash.count == 40 && hash.allSatisfy(\.isHexDigit)) else { return nil }
        return hash
    }
}
