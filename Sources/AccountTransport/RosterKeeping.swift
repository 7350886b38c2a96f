import TransportCore
import XMPP

/// A transport with a contact list it can read and edit: an XMPP account's roster
/// (RFC 6121 §2). Roster mirrors and `xmpp-bridge roster` use it, so nothing downcasts to
/// a concrete transport.
public protocol RosterKeeping: Sendable {
    /// Whether the roster has been fetched since the account connected (an empty roster
    /// before that means "unknown", not "no contacts").
    func rosterReady() async -> Bool
    /// The roster as last fetched and pushed.
    func rosterItems() async -> [RosterItem]
    /// A contact's aggregate presence as this account sees it.
    func contactPresence(_ jid: JID) async -> PresenceState
    /// Adds or updates an item; optionally asks to see the contact's presence.
    func setRosterItem(_ item: RosterItem, subscribe: Bool) async throws
    /// Removes an item.
    func removeRosterItem(_ jid: JID) async throws
    /// Lets `contact` see the account's presence (answers its subscription request).
    func approveSubscription(of contact: JID) async throws
}
