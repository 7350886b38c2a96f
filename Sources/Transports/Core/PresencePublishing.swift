/// A transport that can show a presence of its own (an XMPP account: RFC 6121 §4.2).
public protocol PresencePublishing: Sendable {
    /// Broadcasts `state` as the account's presence; `.unavailable` sends unavailable presence.
    func publishPresence(_ state: PresenceState) async
}
