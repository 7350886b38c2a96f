import Foundation

/// Paging's state (issue 24): pages, the notifications accepted, and postponed deliveries, read back at start (the journal writes them).
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol PagingStore: AnyObject, Sendable {
    /// Pages created at or after `since`, oldest first; rows this build cannot read skipped.
    func pages(since: Date) throws(StateStoreError) -> [Page]
    /// Notifications accepted at or after `since`: key, message id, when.
    func acceptedNotifications(since: Date) throws(StateStoreError) -> [(key: String, id: String, at: Date)]
    /// Postponed deliveries, in the order they were postponed.
    func postponedDeliveries() throws(StateStoreError) -> [PostponedDeliveries.Postponement]
}
