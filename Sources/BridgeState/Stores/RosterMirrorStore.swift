import Foundation

/// Roster mirrors' snapshots (issue 5): what each mirror direction last wrote, for its three-way reconciliation.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol RosterMirrorStore: AnyObject, Sendable {
    /// The stored snapshot of the mirror direction `id`; empty when none was saved.
    func rosterMirrorSnapshot(id: String) throws(StateStoreError) -> RosterMirrorSnapshot
    /// Stores `snapshot` as the mirror direction `id`'s, replacing the previous one.
    func saveRosterMirrorSnapshot(_ snapshot: RosterMirrorSnapshot, id: String) throws(StateStoreError)
}
