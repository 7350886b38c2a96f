import Foundation

/// The journal's writes (issue 4, issue 26): each group commit applied in one transaction, with the intake log position it reaches (``IntakeLogFile``).
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol JournalStore: AnyObject, Sendable {
    /// Applies `entries` in one transaction, with the intake log position they reach.
    func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?, as operation: StateStoreError.Operation) throws(StateStoreError)
    /// Applies `entries` one by one in one transaction, each on its own (a savepoint): one
    /// that cannot be applied is handed to `dropped` and left out.
    func applyEach(
        _ entries: ArraySlice<JournalEntry>, intakeThrough: IntakeLogFile.Position?, dropped: (JournalEntry, any Error) -> Void
    ) throws(StateStoreError)
    /// How far the intake log is applied (``IntakeLogFile/Position``); nil before it ever was.
    func intakeApplied() throws(StateStoreError) -> IntakeLogFile.Position?
    /// The highest sequence ever used by the queue or the dead letters (0 when none).
    func lastSequence() throws(StateStoreError) -> Int64
}

extension JournalStore {
    package func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?) throws(StateStoreError) {
        try self.apply(entries, intakeThrough: intakeThrough, as: .enqueue)
    }
}
