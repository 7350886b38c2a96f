import BridgeState
/// What paging would change for one message (issue 24): pages made or resolved,
/// deliveries postponed, and the journal entries that store them in the message's commit.
/// Taken into memory only once that commit succeeded, so a failed commit leaves no page
/// that escalates and no postponed delivery that a retry would send again.
package struct PagingProposal: Sendable {
    package var pages: [Page] = []
    package var postponements: [PostponedDeliveries.Postponement] = []
    /// The de-duplication key of the message's notification, pending until committed.
    package var notificationKey: String?
    package var entries: [JournalEntry] = []

    package init(pages: [Page] = [], postponements: [PostponedDeliveries.Postponement] = [], notificationKey: String? = nil, entries: [JournalEntry] = []) {
        self.pages = pages
        self.postponements = postponements
        self.notificationKey = notificationKey
        self.entries = entries
    }
}
