/// What a ``StreamLedgerFile`` says: the account's resumable session as the last process
/// left it (XEP-0198 §5), and the ids of stanzas the server acknowledged.
package struct StreamLedgerSnapshot: Hashable, Sendable {
    package struct Session: Hashable, Sendable {
        /// ``StreamLedgerFile/tag(_:)`` of the session id.
        package var tag: UInt64
        package var acknowledged: UInt32
        package var sent: UInt32
        /// The handled count last reported to the server (`<a h/>`).
        package var reported: UInt32
        /// More stanzas were unacknowledged than the file holds: the window is not known.
        package var overflowed: Bool

        package init(tag: UInt64, acknowledged: UInt32, sent: UInt32, reported: UInt32, overflowed: Bool) {
            self.tag = tag
            self.acknowledged = acknowledged
            self.sent = sent
            self.reported = reported
            self.overflowed = overflowed
        }
    }

    /// The session that was current, if any.
    package var current: Session?
    /// The current session's unacknowledged stanzas' ids, in number order ("" where not
    /// known for sure).
    package var unacknowledgedIDs: [String] = []
    /// Ids of stanzas the server acknowledged, in this session or the one before, that are
    /// still in the file: delivered, whether or not their completion was committed.
    package var acknowledgedIDs: [String] = []
    /// Ids of stanzas marked as being written after the last one recorded as written (a
    /// component link): the process ended between the two, so the kernel may or may not
    /// have taken them.
    package var inDoubtIDs: [String] = []

    /// Whether the stored session `id` can be resumed with this file's positions.
    package func resumes(sessionID id: String) -> Bool {
        guard let current else { return false }
        return current.tag == StreamLedgerFile.tag(id) && !current.overflowed
    }

    package init(current: Session? = nil, unacknowledgedIDs: [String] = [], acknowledgedIDs: [String] = [], inDoubtIDs: [String] = []) {
        self.current = current
        self.unacknowledgedIDs = unacknowledgedIDs
        self.acknowledgedIDs = acknowledgedIDs
        self.inDoubtIDs = inDoubtIDs
    }
}
