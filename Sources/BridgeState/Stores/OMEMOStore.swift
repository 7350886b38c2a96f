import OMEMOState

/// OMEMO accounts' state (issue 41): each account's device, keys, trust and followed device
/// lists. Written through the journal (``JournalEntry/omemo(account:_:)``).
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol OMEMOStore: AnyObject, Sendable {
    /// `account`'s OMEMO state; nil when it never was an OMEMO device.
    func omemoState(account: String) throws(StateStoreError) -> OMEMOAccountState?
    /// Writes `changes` of `account` at once, outside the journal (`omemo trust` with no
    /// daemon running).
    func saveOMEMO(_ changes: [OMEMOStateChange], account: String) throws(StateStoreError)
    /// The accounts with an OMEMO device.
    func omemoAccounts() throws(StateStoreError) -> [String]
}
