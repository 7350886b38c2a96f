import Foundation
import GRDB

/// Roster mirror snapshots: what each mirror direction knew after its last reconciliation,
/// so changes made while the bridge was down are reconciled three-way at start.
extension SQLiteStateStore {
    /// The stored snapshot of the mirror direction `id`; empty when none was saved.
    package func rosterMirrorSnapshot(id: String) throws(StateStoreError) -> RosterMirrorSnapshot {
        try self.read(.readRosterMirror) { db in
            guard let record = try RosterMirrorSnapshotRecord.fetchOne(db, key: id) else {
                return RosterMirrorSnapshot()
            }
            return try JSONDecoder().decode(RosterMirrorSnapshot.self, from: Data(record.snapshotJSON.utf8))
        }
    }

    /// Stores `snapshot` as the mirror direction `id`'s, replacing the previous one.
    package func saveRosterMirrorSnapshot(_ snapshot: RosterMirrorSnapshot, id: String) throws(StateStoreError) {
        try self.write(.saveRosterMirror) { db in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = String(decoding: try encoder.encode(snapshot), as: UTF8.self)
            try RosterMirrorSnapshotRecord(mirrorID: id, snapshotJSON: json).upsert(db)
        }
    }
}
