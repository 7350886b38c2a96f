import BridgeState
import XMPP

/// The state's record of a resumable stream and the XMPP library's (XEP-0198 §5): the same
/// fields, converted where the relay hands sessions to accounts and stores theirs.
extension StoredStreamSession {
    package init(_ session: StreamManagementStateMachine.StoredSession) {
        self.init(
            id: session.id, location: session.location, handled: session.handled, acknowledged: session.acknowledged,
            unacknowledgedIDs: session.unacknowledgedIDs, jid: session.jid, acknowledgedIDs: session.acknowledgedIDs
        )
    }

    /// The XMPP library's form.
    package var streamManagement: StreamManagementStateMachine.StoredSession {
        var session = StreamManagementStateMachine.StoredSession(
            id: self.id, location: self.location, handled: self.handled, acknowledged: self.acknowledged, unacknowledgedIDs: self.unacknowledgedIDs, jid: self.jid
        )
        session.acknowledgedIDs = self.acknowledgedIDs
        return session
    }
}
