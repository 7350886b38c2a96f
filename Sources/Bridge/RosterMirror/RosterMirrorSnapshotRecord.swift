import GRDB

/// A row of `roster_mirror_snapshots`: one mirror direction's snapshot, as JSON.
///
/// JSON rather than a row per contact: the snapshot is read and written whole, once per
/// reconciliation, and its shape can grow without a migration.
struct RosterMirrorSnapshotRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "roster_mirror_snapshots"

    /// Names the mirror direction, e.g. `work->home` (primary key).
    var mirrorID: String
    /// The `RosterMirrorSnapshot`, JSON-encoded with sorted keys.
    var snapshotJSON: String

    enum CodingKeys: String, CodingKey {
        case mirrorID = "mirror_id"
        case snapshotJSON = "snapshot_json"
    }
}
