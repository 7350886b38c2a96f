import BridgeState
import XMPP

/// An account's stream positions with several instances (issue 26): kept in the host's
/// ledger file as on one host (``StreamLedgerFile``), and the inbound count the server
/// was told (`<a h/>`, XEP-0198 §4) also recorded in the shared state with the next commit
/// (`.sourcePosition`, a claim of the lease like any session state). An instance taking the
/// account over resumes the session with it (``InheritedDeliveries``): a server that was
/// told more than the resumption says closes the stream (Prosody does), so the count must
/// not lag what was reported, except for the moment before that commit.
package struct SharedStreamPositions: StreamPositionLedger {
    package let local: StreamLedgerFile
    package let transport: String
    package let journal: Journal

    package func begin(sessionID: String, acknowledged: UInt32) { self.local.begin(sessionID: sessionID, acknowledged: acknowledged) }
    package func sent(_ number: UInt32, id: String?) { self.local.sent(number, id: id) }
    package func acknowledged(through number: UInt32) { self.local.acknowledged(through: number) }
    package func end() { self.local.end() }
    package func writing(_ number: UInt32, id: String?) { self.local.writing(number, id: id) }
    package func written(through number: UInt32) { self.local.written(through: number) }

    package func reported(handled number: UInt32) {
        self.local.reported(handled: number)
        self.journal.recordLazily([.sourcePosition(transport: self.transport, sequence: number)])
    }

    package init(local: StreamLedgerFile, transport: String, journal: Journal) {
        self.local = local
        self.transport = transport
        self.journal = journal
    }
}
