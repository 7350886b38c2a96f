import Foundation
import GRDB

/// The alerts of paging channels and the notifications accepted lately (issue 24),
/// tables `pages` and `accepted_notifications`; written by the journal.
extension SQLiteStateStore {
    /// Pages created at or after `since`, oldest first; rows this build cannot read are skipped.
    package func pages(since: Date) throws(StateStoreError) -> [Page] {
        try self.read(.readPages) { db in
            try String.fetchAll(db, sql: "SELECT state FROM pages WHERE created_at >= ? ORDER BY created_at", arguments: [StorageTimestamp.text(since)])
                .compactMap(PageColumn.decode)
        }
    }

    /// Notifications accepted at or after `since`: key, message id, when.
    package func acceptedNotifications(since: Date) throws(StateStoreError) -> [(key: String, id: String, at: Date)] {
        try self.read(.readPages) { db in
            try Row.fetchAll(db, sql: "SELECT key, message_id, accepted_at FROM accepted_notifications WHERE accepted_at >= ?", arguments: [StorageTimestamp.text(since)])
                .map { row in (row["key"], row["message_id"], row["accepted_at"]) }
        }
    }
}
