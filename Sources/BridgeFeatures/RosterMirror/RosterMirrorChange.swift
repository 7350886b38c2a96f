import XMPP

/// One roster set a mirror asks for on its target account (RFC 6121 §2.3, §2.5).
///
/// The caller turns it into a roster set with `Roster.setItem(_:)` or
/// `Roster.removeItem(_:)`.
package enum RosterMirrorChange: Hashable, Sendable {
    /// Add or update the target's item: its `jid`, `name` and `groups` (subscription and
    /// `ask` belong to the server and are left out of the set).
    case set(RosterItem)
    /// Delete the target's item for this bare JID (`subscription='remove'`).
    case remove(JID)

    /// The contact the change is about.
    package var jid: JID {
        switch self {
        case .set(let item): item.jid
        case .remove(let jid): jid
        }
    }
}
