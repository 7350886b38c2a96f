import Foundation
import GRDB

/// Deliveries postponed by a flood limit or quiet hours (issue 24), table
/// `postponed_deliveries`; written by the journal.
extension SQLiteStateStore {
    /// Postponed deliveries (flood limit, quiet hours), in the order they were postponed;
    /// rows this build cannot read are skipped.
    package func postponedDeliveries() throws(StateStoreError) -> [PostponedDeliveries.Postponement] {
        try self.read(.readPostponedDeliveries) { db in
            try Row.fetchAll(db, sql: "SELECT release_at, flood, delivery FROM postponed_deliveries ORDER BY rowid").compactMap { row in
                let text: String = row["delivery"]
                guard let delivery = PostponedDeliveryColumn.decode(text) else { return nil }
                return PostponedDeliveries.Postponement(delivery: delivery, releaseAt: row["release_at"], flood: row["flood"])
            }
        }
    }
}
