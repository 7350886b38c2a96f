/// The presence the session broadcasts for its account (RFC 6121 §4.2), sent again after
/// every reconnect, and what every available one carries: the caps element (XEP-0115 §4)
/// and the application's extensions (a vCard photo hash, XEP-0153). Nil presence: the
/// session does not announce itself.
struct OwnPresence: Sendable {
    var presence: Presence?
    private(set) var extensions: [XMLElement] = []

    init(_ presence: Presence?) {
        self.presence = presence
    }

    /// Takes `elements` as the extensions of every available presence; false when they are
    /// the ones already carried (nothing to broadcast again).
    mutating func setExtensions(_ elements: [XMLElement]) -> Bool {
        guard elements != self.extensions else { return false }
        self.extensions = elements
        return true
    }

    /// `presence` as broadcast: with our caps (`capabilities` under `node`) and, when
    /// available, the extensions.
    func announcement(of presence: Presence, capabilities: EntityCapabilities, node: String) -> Presence {
        var announced = presence
        announced.extensions.append(capabilities.capsElement(node: node))
        if announced.type == .available { announced.extensions += self.extensions }
        return announced
    }
}
