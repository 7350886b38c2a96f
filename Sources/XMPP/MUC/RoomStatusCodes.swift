/// What a room's presence says in its `<x xmlns='http://jabber.org/protocol/muc#user'/>`
/// (XEP-0045 §15.6 status codes; `<item nick/>` on a nick change, §7.6; `<destroy/>`, §10.9).
struct RoomStatusCodes: Hashable, Sendable {
    var codes: Set<Int> = []
    /// The new nick of a nick change (303).
    var newNick: String?
    /// The reason given for a kick or ban.
    var reason: String?
    /// The room was destroyed: the reason (possibly empty), and the alternate venue if named.
    var destroyed: String?

    init(_ presence: Presence) {
        guard let x = presence.extensions.first(where: { $0.name == "x" && $0.namespace == "http://jabber.org/protocol/muc#user" }) else { return }
        for child in x.elements {
            switch child.name {
            case "status":
                if let code = child[attribute: "code"].flatMap(Int.init) { self.codes.insert(code) }
            case "item":
                self.newNick = child[attribute: "nick"]
                let reason = child.firstChild(named: "reason")?.text
                if let reason, !reason.isEmpty { self.reason = reason }
            case "destroy":
                var parts: [String] = []
                if let reason = child.firstChild(named: "reason")?.text, !reason.isEmpty { parts.append(reason) }
                if let venue = child[attribute: "jid"] { parts.append("moved to \(venue)") }
                self.destroyed = parts.joined(separator: "; ")
            default:
                continue
            }
        }
    }
}
