import Foundation

/// How far each source got: its stream management session (XEP-0198), its resume points and the deduplication keys it handled, read back at start.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol SourceProgressStore: AnyObject, Sendable {
    /// Every account's stored stream management session (XEP-0198), by account name.
    func streamSessions() throws(StateStoreError) -> [String: StoredStreamSession]
    /// Every stored resume point's position (``ResumePoint``), by storage key.
    func resumePoints() throws(StateStoreError) -> [String: String]
    /// The newest `limit` deduplication keys each transport handled, oldest first.
    func seenDeduplicationKeys(limit: Int) throws(StateStoreError) -> [String: [String]]
    /// Every account's login state (``StoredLogin``), by account name.
    func logins() throws(StateStoreError) -> [String: StoredLogin]
    /// What one account starts from: its stream session, login state and resume point
    /// (one indexed read each: the bridge makes thousands of accounts at a start).
    func startingPoint(transport: String) throws(StateStoreError) -> StoredStartingPoint
}
