import BridgeState
import XMPP

/// The state's stream ledger is the XMPP session's position ledger (XEP-0198): the state
/// knows no XMPP, so the conformance is made here, where both meet.
extension StreamLedgerFile: StreamPositionLedger {}
