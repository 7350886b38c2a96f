import Foundation
import LocalArchive
import TransportCore

/// The local archive in PostgreSQL (issue 25 on issue 26's store): written by the journal
/// (``PostgresJournalScript``), searched through the `words` column (`tsvector`, see
/// ``PostgresSchema``) and its GIN index, ranked by `ts_rank` over the newest
/// ``rankedWindow`` matches, divided by one plus the log of the text's length (so many of
/// the words in a short text come first, as with FTS5's bm25).
extension PostgresStateStore {
    package func archivedCount(channel: String, before: Date) throws(StateStoreError) -> Int {
        Int(try self.integer(.readArchive, "SELECT COUNT(*) FROM archive WHERE channel = $1 AND at < $2", [channel, String(Self.milliseconds(before))]))
    }

    /// The index is a generated column, never behind: the same as ``archived(_:)``.
    package func indexedAndRead(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage {
        try self.archived(query)
    }

    package func archived(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage {
        let limit = max(1, min(query.limit, ArchiveQuery.maximumLimit))
        var conditions: [String] = []
        var parameters: [String?] = []
        func parameter(_ value: String) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let channel = query.channel { conditions.append("a.channel = \(parameter(channel))") }
        if let since = query.since { conditions.append("a.at >= \(parameter(String(Self.milliseconds(since))))") }
        if let until = query.until { conditions.append("a.at < \(parameter(String(Self.milliseconds(until))))") }
        if let sender = query.from?.lowercased() {
            // A bare JID names every resource of it; anything else names one sender or a nick.
            let exact = parameter(sender)
            conditions.append("(a.source_address = \(exact) OR lower(a.sender) = \(exact) OR lower(a.sender) LIKE \(parameter(ArchiveSearch.resourcesPattern(sender))) OR lower(a.nick) = \(exact))")
        }
        var words: String?
        if let search = query.search {
            let terms = ArchiveSearch.terms(search)
            // Nothing searchable (only punctuation): nothing matches.
            guard !terms.isEmpty else { return ArchivePage(messages: [], next: nil) }
            words = terms.map { term in
                term.prefix ? "to_tsquery('archive_words', \(parameter(ArchiveSearch.prefixQuery(term))))" : "phraseto_tsquery('archive_words', \(parameter(term.text)))"
            }.joined(separator: " && ")
            conditions.append("a.words @@ (\(words!))")
        }
        if let before = query.before, !(query.ranked && words != nil) { conditions.append("a.id < \(parameter(String(before)))") }
        let columns = """
            a.id, a.at, a.channel, a.source_transport, a.source_address, a.sender, a.nick, a.source_id, a.body, a.subject, a.content,
              a.copies, a.bridge_made, a.edited_at, a.retracted_at
            """
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql: String
        if let words, query.ranked {
            sql = """
                SELECT \(columns.replacingOccurrences(of: "a.", with: "c.")) FROM (
                  SELECT \(columns), ts_rank(a.words, \(words), 1) AS score FROM archive a\(filter) ORDER BY a.id DESC LIMIT \(Self.rankedWindow)) c
                ORDER BY c.score DESC, c.id DESC LIMIT \(limit + 1)
                """
        } else {
            sql = "SELECT \(columns) FROM archive a\(filter) ORDER BY a.id DESC LIMIT \(limit + 1)"
        }
        var messages = try self.query(.readArchive, sql, parameters).rows.compactMap(Self.archivedMessage)
        var next: Int64?
        if messages.count > limit {
            messages.removeLast()
            if !(query.ranked && words != nil) { next = messages.last?.number }
        }
        return ArchivePage(messages: messages, next: next)
    }

    private static func archivedMessage(_ row: [String?]) -> ArchivedMessage? {
        guard row.count == 15, let number = row[0].flatMap({ Int64($0) }), let at = row[1].flatMap({ Int64($0) }), let channel = row[2],
              let transport = row[3], let sender = row[5], let nick = row[6], let sourceID = row[7], let body = row[8]
        else { return nil }
        var message = ArchivedMessage(
            at: Self.date(milliseconds: at), channel: channel, source: Endpoint(transport: transport, address: row[4]), sender: sender, nick: nick,
            sourceID: sourceID, body: body, subject: row[9], content: MessageContentColumn.decode(row[10]),
            copies: ArchiveCopiesColumn.decode(row[11]), bridgeMade: row[12] == "t"
        )
        message.number = number
        message.editedAt = row[13].flatMap { Int64($0) }.map(Self.date(milliseconds:))
        message.retractedAt = row[14].flatMap { Int64($0) }.map(Self.date(milliseconds:))
        return message
    }
}
