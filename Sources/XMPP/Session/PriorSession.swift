import Foundation

/// What a new owner of an account knows of the session an earlier owner, another process,
/// left behind (another process on the same account): its stream management session without
/// the outbound positions, which went with that process (resumed from this new connection
/// if the server still holds it: XEP-0198 §5), and the ids of messages it may have sent.
/// Those are looked up in the account's archive (XEP-0313) before the first stream reports
/// online, as a lost session's are; the ones found are reported as
/// ``XMPPSessionEvent/resumedAfterRestart(handledIDs:)``.
public struct PriorSession: Sendable {
    /// Its id, location, JID and inbound count; nil when it left none.
    public var session: StreamManagementStateMachine.StoredSession?
    /// The ids of the messages it may have sent (each also its origin-id), oldest first.
    public var messageIDs: [String]
    /// None of them can be older.
    public var since: Date
    /// At least how long ago its stream was lost (when it was last heard of): a server
    /// restarted since may have archived copies it never routed.
    public var lostFor: Duration

    public init(session: StreamManagementStateMachine.StoredSession?, messageIDs: [String], since: Date, lostFor: Duration) {
        self.session = session
        self.messageIDs = messageIDs
        self.since = since
        self.lostFor = lostFor
    }
}
