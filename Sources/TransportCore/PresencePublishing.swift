/// A transport that can show a presence of its own (an XMPP account: RFC 6121 §4.2).
public protocol PresencePublishing: Sendable {
    /// Shows `state` as the account's presence; `.unavailable` is shown to the subscribed contacts
    /// while the connection itself stays available.
    func publishPresence(_ state: PresenceState) async
}
