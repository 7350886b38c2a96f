import Foundation
import LocalArchive

/// The local archive's reads (issue 25); the journal writes it.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol ArchiveStore: AnyObject, Sendable {
    /// How many of `channel`'s messages are older than `before`.
    func archivedCount(channel: String, before: Date) throws(StateStoreError) -> Int
    /// What `query` asks for, once the full-text index has everything archived.
    func indexedAndRead(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage
    /// What `query` asks for: newest first, or best first for a ranked search.
    func archived(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage
}
