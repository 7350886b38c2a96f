/// A resumable stream's positions as the state keeps them (XEP-0198 §5): the session's
/// id and where to resume it, the counts of stanzas each side handled, and the ids of ours
/// the server had not acknowledged. The XMPP library's own form is converted at the
/// account's edge; the state knows no XMPP.
package struct StoredStreamSession: Hashable, Sendable, Codable {
    package var id: String
    package var location: String?
    package var handled: UInt32
    package var acknowledged: UInt32
    package var unacknowledgedIDs: [String]
    /// The full JID the session was bound to (a resumed stream keeps it).
    package var jid: String?
    /// Ids the server acknowledged since the state was last handed out (not stored): the
    /// owner marks them done in the same write.
    package var acknowledgedIDs: [String] = []

    package init(id: String, location: String?, handled: UInt32, acknowledged: UInt32, unacknowledgedIDs: [String], jid: String? = nil, acknowledgedIDs: [String] = []) {
        self.id = id
        self.location = location
        self.handled = handled
        self.acknowledged = acknowledged
        self.unacknowledgedIDs = unacknowledgedIDs
        self.jid = jid
        self.acknowledgedIDs = acknowledgedIDs
    }
}
