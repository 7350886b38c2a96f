import Foundation
import GRDB
import TransportCore

/// The local archive (issue 25): written only through the journal (``Journal/apply(_:in:)``
/// calls the statics here inside its transaction), read by `history`, the HTTP route and
/// the retention pruner.
extension StateStore {
    /// Inserts `message` (the same message and channel again changes nothing).
    static func insertArchived(_ message: ArchivedMessage, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body, subject, content, copies, bridge_made)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                Self.milliseconds(message.at), message.channel, message.source.transport, message.source.address, message.sender, message.nick,
                message.sourceID, message.body, message.subject, MessageContentColumn.encode(message.content),
                ArchiveCopiesColumn.encode(message.copies), message.bridgeMade,
            ])
    }

    /// Every archived copy of message `sourceID` from `source` (one per channel) gets the
    /// corrected `body`, or, for nil, is emptied as retracted.
    static func editArchived(source: Endpoint, sourceID: String, body: String?, at: Date, in db: Database) throws {
        let when = Self.milliseconds(at)
        let sql = body == nil
            ? "UPDATE archive SET body = '', content = NULL, retracted_at = ? WHERE source_id = ? AND source_transport = ? AND IFNULL(source_address, '') = ?"
            : "UPDATE archive SET body = ?, edited_at = ? WHERE source_id = ? AND source_transport = ? AND IFNULL(source_address, '') = ?"
        let address = source.address ?? ""
        let arguments: StatementArguments = body.map { [$0, when, sourceID, source.transport, address] } ?? [when, sourceID, source.transport, address]
        try db.cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// Forgets at most `limit` of `channel`'s messages older than `before`, oldest first.
    static func pruneArchive(channel: String, before: Date, limit: Int, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM archive WHERE id IN (SELECT id FROM archive WHERE channel = ? AND at < ? ORDER BY at LIMIT ?)")
            .execute(arguments: [channel, Self.milliseconds(before), limit])
    }

    /// How many of `channel`'s messages are older than `before`.
    func archivedCount(channel: String, before: Date) throws(StateStoreError) -> Int {
        try self.read(.readArchive) { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM archive WHERE channel = ? AND at < ?", arguments: [channel, Self.milliseconds(before)]) ?? 0
        }
    }

    /// What `query` asks for: newest first, or best first for a ranked search.
    func archived(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage {
        let limit = max(1, min(query.limit, ArchiveQuery.maximumLimit))
        var conditions: [String] = []
        var arguments: StatementArguments = []
        var from = "archive a"
        var order = "a.id DESC"
        if let search = query.search {
            // Nothing searchable (only punctuation): nothing matches.
            guard let match = ArchiveSearch.expression(search) else { return ArchivePage(messages: [], next: nil) }
            from = "archive_text JOIN archive a ON a.id = archive_text.rowid"
            conditions.append("archive_text MATCH ?")
            _ = arguments.append(contentsOf: [match])
            if query.ranked { order = "archive_text.rank, a.id DESC" }
        }
        if let channel = query.channel {
            conditions.append("a.channel = ?")
            _ = arguments.append(contentsOf: [channel])
        }
        if let since = query.since {
            conditions.append("a.at >= ?")
            _ = arguments.append(contentsOf: [Self.milliseconds(since)])
        }
        if let until = query.until {
            conditions.append("a.at < ?")
            _ = arguments.append(contentsOf: [Self.milliseconds(until)])
        }
        if let sender = query.from?.lowercased() {
            // A bare JID names every resource of it; anything else names one sender.
            conditions.append("(a.source_address = ? OR lower(a.sender) = ? OR lower(a.sender) LIKE ? ESCAPE '\\' OR lower(a.nick) = ?)")
            let prefix = sender.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "/%"
            _ = arguments.append(contentsOf: [sender, sender, prefix, sender])
        }
        if let before = query.before, !query.ranked {
            conditions.append("a.id < ?")
            _ = arguments.append(contentsOf: [before])
        }
        let sql = """
            SELECT a.id, a.at, a.channel, a.source_transport, a.source_address, a.sender, a.nick, a.source_id, a.body, a.subject, a.content,
              a.copies, a.bridge_made, a.edited_at, a.retracted_at
            FROM \(from)\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(order) LIMIT \(limit + 1)
            """
        return try self.read(.readArchive) { db in
            var messages = try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.archivedMessage)
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

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
