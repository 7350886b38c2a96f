import Foundation
import GRDB
import LocalArchive
import TransportCore

/// The local archive (issue 25): written only through the journal (``Journal/apply(_:in:)``
/// calls the statics here inside its transaction), read by `history`, the HTTP route and
/// the retention pruner.
extension SQLiteStateStore {
    /// Inserts `rows` in order (``ArchiveInsertStatement``); the full-text index takes them
    /// with the next ``indexArchive(in:)``.
    package static func insertArchived(_ rows: [ArchiveRow], in db: Database) throws {
        try ArchiveInsertStatement.insert(rows, in: db)
    }

    /// Adds what the full-text index does not have yet, in one batch (FTS5 costs about a
    /// microsecond a message in batches of thousands, ten times that a few at a time).
    package static func indexArchive(in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO archive_text (rowid, body) SELECT id, body FROM archive WHERE id > (SELECT through FROM archive_indexed) ORDER BY id
            """).execute()
        try db.cachedStatement(sql: "UPDATE archive_indexed SET through = MAX(through, IFNULL((SELECT MAX(id) FROM archive), 0))").execute()
    }

    /// Brings the full-text index up to date (before a search).
    package func indexArchive() throws(StateStoreError) {
        try self.write(.indexArchive) { db in try Self.indexArchive(in: db) }
    }

    /// The archived message `sourceID` from `source` in each of `channels` gets the
    /// corrected `body`, or, for nil, is emptied as retracted. Only the newest
    /// ``editCandidates`` messages of the channel archived in the day before `at` are looked
    /// at (newest first, through the channel's time index): a correction (XEP-0308) is of a
    /// recent message, and an unknown id must cost no more than a known one. From a room,
    /// only `nick`'s own message is edited.
    package static func editArchived(channels: [String], source: Endpoint, nick: String?, sourceID: String, body: String?, at: Date, in db: Database) throws {
        let when = Self.milliseconds(at)
        let set = body == nil ? "body = '', content = NULL, retracted_at = ?" : "body = ?, edited_at = ?"
        let statement = try db.cachedStatement(sql: """
            UPDATE archive SET \(set) WHERE id = (
              SELECT id FROM (SELECT id, at, source_id, source_transport, source_address, nick FROM archive WHERE channel = ? AND at >= ?
                ORDER BY at DESC, id DESC LIMIT \(Self.editCandidates))
              WHERE source_id = ? AND source_transport = ? AND IFNULL(source_address, '') = ? AND (? IS NULL OR nick = ?)
              ORDER BY at DESC, id DESC LIMIT 1)
            """)
        for channel in channels {
            let filter: [(any DatabaseValueConvertible)?] = [channel, when - Self.editWindow, sourceID, source.transport, source.address ?? "", nick, nick]
            let values: [(any DatabaseValueConvertible)?] = (body.map { [$0, when] } ?? [when]) + filter
            try statement.execute(arguments: StatementArguments(values))
        }
    }



    /// Forgets at most `limit` of `channel`'s messages older than `before`, oldest first.
    package static func pruneArchive(channel: String, before: Date, limit: Int, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM archive WHERE id IN (SELECT id FROM archive WHERE channel = ? AND at < ? ORDER BY at LIMIT ?)")
            .execute(arguments: [channel, Self.milliseconds(before), limit])
    }

    /// How many of `channel`'s messages are older than `before`.
    package func archivedCount(channel: String, before: Date) throws(StateStoreError) -> Int {
        try self.read(.readArchive) { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM archive WHERE channel = ? AND at < ?", arguments: [channel, Self.milliseconds(before)]) ?? 0
        }
    }

    /// What `query` asks for, a search after the index took everything (on the journal's
    /// thread, or offline with no daemon running).
    package func indexedAndRead(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage {
        if query.search != nil { try self.indexArchive() }
        return try self.archived(query)
    }

    /// What `query` asks for: newest first, or best first for a ranked search.
    ///
    /// A ranked search ranks the newest ``rankedWindow`` matches (FTS5's bm25): FTS5 walks
    /// its index newest first and stops there, so a word in most messages costs what a
    /// rare one does (measured over a million messages: 20 ms, where ranking every match
    /// took half a second). Fewer matches are all ranked.
    package func archived(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage {
        let limit = max(1, min(query.limit, ArchiveQuery.maximumLimit))
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let channel = query.channel {
            conditions.append("a.channel = ?")
            arguments.append(channel)
        }
        if let since = query.since {
            conditions.append("a.at >= ?")
            arguments.append(Self.milliseconds(since))
        }
        if let until = query.until {
            conditions.append("a.at < ?")
            arguments.append(Self.milliseconds(until))
        }
        if let sender = query.from?.lowercased() {
            // A bare JID names every resource of it; anything else names one sender or a nick.
            conditions.append("(a.source_address = ? OR lower(a.sender) = ? OR lower(a.sender) LIKE ? ESCAPE '\\' OR lower(a.nick) = ?)")
            let prefix = ArchiveSearch.resourcesPattern(sender)
            arguments += [sender, sender, prefix, sender]
        }
        let columns = """
            a.id, a.at, a.channel, a.source_transport, a.source_address, a.sender, a.nick, a.source_id, a.body, a.subject, a.content,
              a.copies, a.bridge_made, a.edited_at, a.retracted_at
            """
        let sql: String
        if let search = query.search {
            // Nothing searchable (only punctuation): nothing matches.
            guard let match = ArchiveSearch.expression(search) else { return ArchivePage(messages: [], next: nil) }
            arguments.insert(match, at: 0)
            if let before = query.before, !query.ranked {
                conditions.append("archive_text.rowid < ?")
                arguments.append(before)
            }
            let filter = (["archive_text MATCH ?"] + conditions).joined(separator: " AND ")
            let matches = "FROM archive_text JOIN archive a ON a.id = archive_text.rowid WHERE \(filter) ORDER BY archive_text.rowid DESC"
            sql = query.ranked
                ? """
                SELECT \(columns) FROM (SELECT archive_text.rowid AS found, archive_text.rank AS score \(matches) LIMIT \(Self.rankedWindow)) c
                JOIN archive a ON a.id = c.found ORDER BY c.score, a.id DESC LIMIT \(limit + 1)
                """
                : "SELECT \(columns) \(matches) LIMIT \(limit + 1)"
        } else {
            if let before = query.before {
                conditions.append("a.id < ?")
                arguments.append(before)
            }
            sql = "SELECT \(columns) FROM archive a\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) ORDER BY a.id DESC LIMIT \(limit + 1)"
        }
        let statementArguments = StatementArguments(arguments)
        return try self.read(.readArchive) { db in
            var messages = try Row.fetchAll(db, sql: sql, arguments: statementArguments).map(Self.archivedMessage)
            var next: Int64?
            if messages.count > limit {
                messages.removeLast()
                if !query.ranked { next = messages.last?.number }
            }
            return ArchivePage(messages: messages, next: next)
        }
    }

    private static func archivedMessage(_ row: Row) -> ArchivedMessage {
        var message = ArchivedMessage(
            at: Self.date(milliseconds: row[1]), channel: row[2], source: Endpoint(transport: row[3], address: row[4]), sender: row[5], nick: row[6],
            sourceID: row[7], body: row[8], subject: row[9], content: MessageContentColumn.decode(row[10]),
            copies: ArchiveCopiesColumn.decode(row[11]), bridgeMade: row[12]
        )
        message.number = row[0]
        message.editedAt = (row[13] as Int64?).map(Self.date(milliseconds:))
        message.retractedAt = (row[14] as Int64?).map(Self.date(milliseconds:))
        return message
    }
}
