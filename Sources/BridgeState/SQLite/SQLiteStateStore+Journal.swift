import Foundation
import GRDB
import TransportCore

/// The journal's side of the SQLite store: a group commit in one transaction, with the
/// intake log position it reaches.
extension SQLiteStateStore {
    package func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?, as operation: StateStoreError.Operation) throws(StateStoreError) {
        try self.write(operation) { db in
            try Self.apply(entries, in: db)
            if let intakeThrough { try Self.markApplied(intakeThrough, in: db) }
        }
    }

    package func applyEach(
        _ entries: ArraySlice<JournalEntry>, intakeThrough: IntakeLogFile.Position?, dropped: (JournalEntry, any Error) -> Void
    ) throws(StateStoreError) {
        try self.write(.enqueue) { db in
            for entry in entries {
                do {
                    try db.inSavepoint {
                        try Self.apply([entry], in: db)
                        return .commit
                    }
                } catch {
                    dropped(entry, error)
                }
            }
            if let intakeThrough { try Self.markApplied(intakeThrough, in: db) }
        }
    }

    /// Records in the database how far the intake log is applied (same transaction).
    private static func markApplied(_ position: IntakeLogFile.Position, in db: Database) throws {
        try db.cachedStatement(sql: #"INSERT OR REPLACE INTO intake_applied (id, epoch, "end") VALUES (0, ?, ?)"#)
            .execute(arguments: [Int64(bitPattern: position.epoch), position.end])
    }

    /// One transaction's statements, prepared once per connection and reused, for what
    /// the group's ``JournalCommitPlan`` writes.
    package static func apply(_ entries: [JournalEntry], in db: Database) throws {
        let plan = JournalCommitPlan(entries)
        // Archive rows wait here and go in together, before anything that reads or changes
        // the archive and at the end: their order, and so their ids, stay the entries' order.
        var archived: [ArchiveRow] = []
        func insertArchived() throws {
            guard !archived.isEmpty else { return }
            try Self.insertArchived(archived, in: db)
            archived.removeAll(keepingCapacity: true)
        }
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .enqueue(let delivery, let enqueuedAt, let attempts):
                if plan.touchesQueue(at: index) {
                    try db.cachedStatement(sql: Self.insertQueued)
                        .execute(arguments: Self.arguments(DeliveryRow.queue(delivery, enqueuedAt: enqueuedAt, attempts: attempts)))
                }
                try db.cachedStatement(sql: Self.insertRelay).execute(arguments: Self.arguments(DeliveryRow.relay(delivery, createdAt: enqueuedAt)))
            case .complete(let sequence):
                guard plan.touchesQueue(at: index) else { continue }
                try db.cachedStatement(sql: "DELETE FROM queue WHERE sequence = ?").execute(arguments: [sequence])
            case .attempted(let sequence, let attempts, let error):
                try db.cachedStatement(sql: "UPDATE queue SET attempts = ?, last_error = ? WHERE sequence = ?")
                    .execute(arguments: [attempts, error, sequence])
            case .deadLetter(let delivery, let enqueuedAt, let attempts, let reason):
                try db.cachedStatement(sql: "DELETE FROM queue WHERE sequence = ?").execute(arguments: [delivery.sequence])
                try db.cachedStatement(sql: Self.insertDeadLetter).execute(
                    arguments: Self.arguments(DeliveryRow.deadLetter(delivery, enqueuedAt: enqueuedAt, attempts: attempts, reason: reason, deadAt: Date()))
                )
            case .removeDeadLetter(let sequence):
                try db.cachedStatement(sql: "DELETE FROM dead_letters WHERE sequence = ?").execute(arguments: [sequence])
            case .streamSession(let transport, let session):
                // What the server acknowledged leaves the queue in the same transaction as the
                // session state that counts it, so a restart never sends it again.
                try Self.deleteQueued(transport: transport, relayIDs: session?.acknowledgedIDs ?? [], in: db)
                guard plan.writesSession(transport, at: index) else { continue }
                try StreamSessionRecord.save(session, transport: transport, in: db)
            case .sourcePosition(let transport, let sequence):
                try db.cachedStatement(sql: "UPDATE stream_sessions SET handled = ? WHERE transport = ? AND handled < ?")
                    .execute(arguments: [Int64(sequence), transport, Int64(sequence)])
            case .seen(let transport, let key):
                // The table and column keep their first names; they hold deduplication keys.
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO seen_unique_ids (transport, unique_id) VALUES (?, ?)")
                    .execute(arguments: [transport, key])
            case .resumePoint(let key, let position):
                // The table keeps its first name; what it holds are resume points.
                guard plan.writesResumePoint(key, at: index) else { continue }
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO source_checkpoints (transport, checkpoint) VALUES (?, ?)")
                    .execute(arguments: [key, position])
            case .trimSeen(let transport, let keep):
                try db.cachedStatement(sql: """
                    DELETE FROM seen_unique_ids WHERE transport = ? AND position <= (
                      SELECT position FROM seen_unique_ids WHERE transport = ? ORDER BY position DESC LIMIT 1 OFFSET ?)
                    """).execute(arguments: [transport, transport, keep])
            case .receipt(let relayID, let target, let displayed, let at):
                // Displayed implies received; the first time of each is kept.
                try db.cachedStatement(sql: """
                    UPDATE relays SET received_at = COALESCE(received_at, ?), displayed_at = CASE WHEN ? THEN COALESCE(displayed_at, ?) ELSE displayed_at END
                    WHERE relay_id = ? AND target_transport = ? AND target_address IS ?
                    """).execute(arguments: [at, displayed, at, relayID, target.transport, target.address])
            case .copyStanzaID(let relayID, let target, let stanzaID):
                try db.cachedStatement(sql: "UPDATE relays SET copy_stanza_id = ? WHERE relay_id = ? AND target_transport = ? AND target_address IS ?")
                    .execute(arguments: [stanzaID.rawValue, relayID, target.transport, target.address])
            case .page(let page):
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO pages (source_transport, source_id, channel, created_at, state) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [page.source.transport, page.id, page.channel, StorageTimestamp.text(page.createdAt), PageColumn.encode(page)])
            case .notificationAccepted(let key, let id, let at):
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO accepted_notifications (key, message_id, accepted_at) VALUES (?, ?, ?)")
                    .execute(arguments: [key, id, StorageTimestamp.text(at)])
            case .postpone(let delivery, let releaseAt, let flood):
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO postponed_deliveries (relay_id, release_at, flood, delivery) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [delivery.relayID, StorageTimestamp.text(releaseAt), flood, PostponedDeliveryColumn.encode(delivery)])
            case .prunePaging(let pagesBefore, let notificationsBefore):
                try db.cachedStatement(sql: "DELETE FROM pages WHERE created_at <= ?").execute(arguments: [StorageTimestamp.text(pagesBefore)])
                try db.cachedStatement(sql: "DELETE FROM accepted_notifications WHERE accepted_at < ?").execute(arguments: [StorageTimestamp.text(notificationsBefore)])
            case .releasePostponed(let relayIDs):
                for relayID in relayIDs {
                    try db.cachedStatement(sql: "DELETE FROM postponed_deliveries WHERE relay_id = ?").execute(arguments: [relayID])
                }
            case .archive(let row):
                archived.append(row)
            case .archiveEdit(let channels, let source, let nick, let sourceID, let body, let at):
                try insertArchived()
                try Self.editArchived(channels: channels, source: source, nick: nick, sourceID: sourceID, body: body, at: at, in: db)
            case .indexArchive:
                try insertArchived()
                try Self.indexArchive(in: db)
            case .pruneArchive(let channel, let before, let limit):
                try insertArchived()
                try Self.pruneArchive(channel: channel, before: before, limit: limit, in: db)
            case .login(let transport, let login):
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO logins (\(StoredLogin.columnList)) VALUES (?, ?, ?, ?, ?, ?)")
                    .execute(arguments: StatementArguments(login.columns(transport: transport)))
            case .omemo(let account, let changes):
                try Self.applyOMEMO(changes, account: account, in: db)
            case .sourceStanzaID(let source, let sourceID, let stanzaID):
                try db.cachedStatement(sql: "UPDATE relays SET source_stanza_id = ? WHERE source_transport = ? AND source_address IS ? AND source_id = ?")
                    .execute(arguments: [stanzaID.rawValue, source.transport, source.address, sourceID])
            }
        }
        try insertArchived()
    }
}
