/// What a ``StreamLedgerFile`` says: the account's resumable session as the last process
/// left it (XEP-0198 §5), and the ids of stanzas the server acknowledged.
struct StreamLedgerSnapshot: Hashable, Sendable {
    struct Session: Hashable, Sendable {
        /// ``StreamLedgerFile/tag(_:)`` of the session id.
        var tag: UInt64
        var acknowledged: UInt32
        var sent: UInt32
        /// The handled count last reported to the server (`<a h/>`).
        var reported: UInt32
        /// More stanzas were unacknowledged than the file holds: the window is not known.
        var overflowed: Bool
    }

    /// The session that was current, if any.
    var current: Session?
    /// The current session's unacknowledged stanzas' ids, in number order ("" where not
    /// known for sure).
    var unacknowledgedIDs: [String] = []
    /// Ids of stanzas the server acknowledged, in this session or the one before, that are
    /// still in the file: delivered, whether or not their completion was committed.
    var acknowledgedIDs: [String] = []
    /// Ids of stanzas marked as being written after the last one recorded as written (a
    /// component link): the process ended between the two, so the kernel may or may not
    /// have taken them.
    var inDoubtIDs: [String] = []

    /// Whether the stored session `id` can be resumed with this file's positions.
    func resumes(sessionID id: String) -> Bool {
        guard let current else { return false }
        return current.tag == StreamLedgerFile.tag(id) && !current.overflowed
    }
}
