import GRDB

/// A row of `roster_mirror_snapshots`: one mirror direction's snapshot, as JSON.
///
/// JSON rather than a row per contact: the snapshot is read and written whole, once per
/// reconciliation, and its shape can grow without a migration.
package struct RosterMirrorSnapshotRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "roster_mirror_snapshots"

    /// Names the mirror direction, e.g. `work->home` (primary key).
    package var mirrorID: String
    /// The `RosterMirrorSnapshot`, JSON-encoded with sorted keys.
    package var snapshotJSON: String

    package enum CodingKeys: String, CodingKey {
        case mirrorID = "mirror_id"
        case snapshotJSON = "snapshot_json"
    }

    package init(mirrorID: String, snapshotJSON: String) {
        self.mirrorID = mirrorID
        self.snapshotJSON = snapshotJSON
    }
}
