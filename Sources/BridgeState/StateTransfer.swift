import Foundation

/// `xmpp-bridge state migrate` (issue 26): copies a single host's SQLite state (routes, id
/// map, queue, dead letters, stream sessions, roster mirror snapshots, deduplication keys, paging,
/// gateway registrations, archive, OMEMO state, logins) into an empty PostgreSQL database, in one transaction.
/// Both stores hold the same values in the same columns (``PostgresSchema``), so rows are
/// copied as they are; what PostgreSQL computes itself (the archive's words, positions that
/// stand for SQLite's `rowid`) it computes, in the same order. Identities and the queue's
/// sequence then continue past the copied rows.
///
/// Not copied: the intake log's applied position (a file beside the SQLite database, applied
/// before the copy) and the stream ledgers (files on that host; a session resumed after the
/// move starts anew, with the archive check).
package struct StateTransfer {
    /// What was copied: rows per table.
    package typealias Summary = [(table: String, rows: Int)]

    /// The tables copied, in order, and whether their row order matters (SQLite's `rowid`
    /// stands for a `position` there).
    package static let tables: [(name: String, ordered: Bool)] = [
        ("routes", true), ("relays", true), ("queue", false), ("dead_letters", false), ("stream_sessions", false),
        ("source_checkpoints", false), ("seen_unique_ids", true), ("roster_mirror_snapshots", false), ("gateway_registrations", false),
        ("pages", false), ("accepted_notifications", false), ("postponed_deliveries", true), ("archive", true),
        ("omemo_device", false), ("omemo_keys", false), ("omemo_trust", false), ("omemo_device_lists", false), ("logins", false),
    ]

    package let source: SQLiteStateStore
    package let target: PostgresConnection

    /// The advisory lock a copy holds (any fixed number, the same everywhere).
    package static var lock: Int64 { 0x7862_6D69_6772_6174 }

    /// Copies every table; refused (nothing written) when the target holds state already.
    package func run() throws(StateTransferError) -> Summary {
        _ = try self.pg { () throws(PostgresError) in try self.target.execute("BEGIN") }
        do throws(StateTransferError) {
            // Checked in the copy's transaction, under a lock a second copy waits for; an
            // instance that ever ran on the database counts as state.
            let occupied = try self.pg { () throws(PostgresError) in
                try self.target.execute("SELECT pg_advisory_xact_lock(\(Self.lock))")
                var occupied: [String] = []
                for table in Self.tables.map(\.name) + ["instances"] {
                    let rows = try self.target.execute("SELECT count(*) FROM (SELECT 1 FROM \"\(table)\" LIMIT 1) t").first?.first ?? nil
                    if rows != "0" { occupied.append(table) }
                }
                return occupied
            }
            guard occupied.isEmpty else { throw StateTransferError.targetNotEmpty(tables: occupied) }
            var summary: Summary = []
            for table in Self.tables {
                summary.append((table.name, try self.copy(table.name, ordered: table.ordered)))
            }
            try self.pg { () throws(PostgresError) in
                // Every identity (copied ids, or positions PostgreSQL numbered) and the
                // queue's sequence go on past what was copied.
                let identities = try self.target.execute(
                    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' AND table_name = ANY($1::text[])",
                    [PostgresArray.text(Self.tables.map(\.name))]
                )
                for row in identities where row.count == 2 {
                    guard let table = row[0], let column = row[1] else { continue }
                    try self.target.execute(
                        "SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT COALESCE(MAX(\"\(column)\"), 0) FROM \"\(table)\"), 1))",
                        [table, column]
                    )
                }
                try self.target.execute(
                    "SELECT setval('queue_sequence', GREATEST((SELECT COALESCE(MAX(sequence), 0) FROM queue), (SELECT COALESCE(MAX(sequence), 0) FROM dead_letters), 1))"
                )
                try self.target.execute("COMMIT")
            }
            return summary
        } catch {
            _ = try? self.target.execute("ROLLBACK")
            throw error
        }
    }

    /// Copies `table`'s columns that both databases have and PostgreSQL does not compute;
    /// how many rows.
    private func copy(_ table: String, ordered: Bool) throws(StateTransferError) -> Int {
        let writable = Set(try self.pg { () throws(PostgresError) in
            try self.target.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'",
                [table]
            ).compactMap { $0.first ?? nil }
        })
        let columns: [String]
        do {
            columns = try self.source.columns(of: table).filter(writable.contains)
        } catch {
            throw .source(error)
        }
        guard !columns.isEmpty else { return 0 }
        let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        // PostgreSQL takes at most 65,535 parameters per statement.
        let batchSize = max(1, min(500, 60_000 / columns.count))
        var copied = 0
        var failure: PostgresError?
        do {
            try self.source.exportRows(of: table, columns: columns, ordered: ordered, batchSize: batchSize) { rows in
                let values = rows.indices.map { row in
                    "(" + columns.indices.map { "$\(row * columns.count + $0 + 1)" }.joined(separator: ", ") + ")"
                }.joined(separator: ", ")
                do throws(PostgresError) {
                    try self.target.execute("INSERT INTO \"\(table)\" (\(list)) OVERRIDING SYSTEM VALUE VALUES \(values)", rows.flatMap { $0 })
                } catch {
                    failure = error
                    throw error
                }
                copied += rows.count
            }
        } catch {
            throw failure.map { .target($0, table: table) } ?? .source(error)
        }
        return copied
    }

    private func pg<T>(_ body: () throws(PostgresError) -> T) throws(StateTransferError) -> T {
        do {
            return try body()
        } catch {
            throw .target(error, table: nil)
        }
    }

    package init(source: SQLiteStateStore, target: PostgresConnection) {
        self.source = source
        self.target = target
    }
}
