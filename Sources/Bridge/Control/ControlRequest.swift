/// One request on the control socket (JSON line) or from `xmpp-bridge route` offline:
/// list the routing table, or add or remove a channel member at run time.
struct ControlRequest: Codable, Sendable {
    enum Operation: String, Codable, Sendable {
        case list
        case add
        case remove
        /// An account's contacts (`transport` names the account); daemon only.
        case roster
        /// Every transport's state, queue depth and last error.
        case status
    }

    var op: Operation
    var channel: String?
    /// An account or local transport name.
    var transport: String?
    /// A contact's JID, for account members.
    var address: String?
    var direction: String?
}
