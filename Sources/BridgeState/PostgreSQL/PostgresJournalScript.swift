import Foundation
import TransportCore

/// One journal group commit as a PostgreSQL script (``PostgresStateStore``): the statements
/// ``SQLiteStateStore/apply(_:in:)`` runs, in the same order, with their values as
/// ``SQLLiteral``s, so the group is one round trip (with ``bound``, one more for each of
/// those statements). Rows appended one after another
/// (queued deliveries, id map rows, seen ids, archive rows, completions) gather into one
/// multi-row statement each, written out before any statement that is not such an append.
///
/// The statements that carry secrets are not in the script: they follow it, in the same
/// transaction, with bound parameters (``bound``).
package struct PostgresJournalScript {
    package private(set) var sql = ""
    /// What the group writes of accounts' secrets (OMEMO keys, FAST tokens), in order, to run
    /// after ``sql`` in its transaction. These tables are written by nothing else in a
    /// group, so running them last keeps every table's order.
    package private(set) var bound: [PostgresBoundStatement] = []
    private var queueRows: [String] = []
    private var relayRows: [String] = []
    private var seenRows: [String] = []
    private var archiveRows: [String] = []
    private var completed: [Int64] = []
    /// The highest queue sequence the group uses: the queue's sequence is moved past it.
    private var highestSequence: Int64 = 0

    /// The script for `entries` (with the intake log position they reach). With a
    /// `fence` (several instances, issue 26) it first checks that `owner` still holds each
    /// claimed lease with its epoch (``LeaseTable``'s `bridge_fence`), and ends by waking the
    /// owners of the targets it queued for (`NOTIFY`, sent when the transaction commits).
    package init(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position? = nil, fence: (owner: String, claims: [String: Int64])? = nil) {
        if let fence, !fence.claims.isEmpty {
            let claims = fence.claims.sorted { $0.key < $1.key }
            self.sql += "SELECT bridge_fence(\(Self.text(fence.owner)), ARRAY[\(claims.map { Self.text($0.key) }.joined(separator: ", "))]::text[], "
                + "ARRAY[\(claims.map { String($0.value) }.joined(separator: ", "))]::bigint[]);\n"
        }
        let plan = JournalCommitPlan(entries)
        for (index, entry) in entries.enumerated() { self.add(entry, at: index, plan: plan) }
        self.flush()
        if let intakeThrough {
            self.sql += """
                INSERT INTO intake_applied (id, epoch, "end") VALUES (0, \(Int64(bitPattern: intakeThrough.epoch)), \(intakeThrough.end))
                ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, "end" = excluded."end";

                """
        }
        if let owner = fence?.owner {
            var targets: Set<String> = []
            for case .enqueue(let delivery, _, _) in entries { targets.insert(delivery.target.transport) }
            for target in targets.sorted() {
                self.sql += "SELECT pg_notify(\(Self.text(Self.queueChannel)), \(Self.text(Self.notice(from: owner, target: target))));\n"
            }
        }
        // Sharing the queue (a fenced commit), the sequences come from a block whose
        // reservation moved the sequence already.
        if self.highestSequence > 0, fence == nil {
            self.sql += """
                SELECT setval('queue_sequence', GREATEST(\(self.highestSequence), (SELECT CASE WHEN is_called THEN last_value ELSE 1 END FROM queue_sequence)));

                """
        }
    }

    /// The `LISTEN` channel a commit that queued deliveries notifies, with ``notice(from:target:)``
    /// as the payload.
    package static var queueChannel: String { "xmpp_bridge_queue" }

    /// A notice's payload: the committing instance (which never holds a space) and the
    /// target transport, so that an instance skips its own (its worker has those rows).
    package static func notice(from instance: String, target: String) -> String {
        instance + " " + target
    }

    /// The target a notice names, nil for one `instance` sent itself.
    package static func target(of notice: String, heardBy instance: String) -> String? {
        guard let space = notice.firstIndex(of: " ") else { return notice }
        return notice[..<space] == instance ? nil : String(notice[notice.index(after: space)...])
    }

    /// The transports whose session a commit of `entries` writes on behalf of (stream state,
    /// positions, deduplication keys of what they received): the leases it must still hold.
    package static func actingTransports(_ entries: [JournalEntry]) -> Set<String> {
        var transports: Set<String> = []
        for entry in entries {
            switch entry {
            case .streamSession(let transport, _), .sourcePosition(let transport, _), .seen(let transport, _), .trimSeen(let transport, _):
                transports.insert(transport)
            case .omemo(let account, _), .login(let account, _):
                // An account's OMEMO keys and FAST token move only with its lease: a former
                // owner's late commit must not roll a ratchet or a rotated token back.
                transports.insert(account)
            case .resumePoint(let key, _):
                // `transport` or `transport room:JID` (``ResumePoint/key``).
                transports.insert(String(key.prefix { $0 != " " }))
            case .enqueue, .complete, .attempted, .deadLetter, .removeDeadLetter, .receipt, .copyStanzaID, .sourceStanzaID, .page,
                .notificationAccepted, .postpone, .prunePaging, .releasePostponed, .archive, .archiveEdit, .indexArchive, .pruneArchive:
                break
            }
        }
        return transports
    }

    /// The source transport an entry was made from, when it was made from a message that
    /// transport received (what it queued, postponed or archived): a commit that leaves out
    /// a transport's session state leaves these out too, or a former owner's late commit
    /// would queue what the new owner, never told it was handled, relays again.
    package static func sourceTransport(of entry: JournalEntry) -> String? {
        switch entry {
        case .enqueue(let delivery, _, _), .postpone(let delivery, _, _): delivery.source.transport
        case .archive(let row): row.sourceTransport
        case .archiveEdit(_, let source, _, _, _, _), .sourceStanzaID(let source, _, _): source.transport
        // Session state (``actingTransports(_:)``), a target's outcomes, and housekeeping.
        case .streamSession, .sourcePosition, .seen, .resumePoint, .trimSeen, .complete, .attempted, .deadLetter, .removeDeadLetter, .receipt,
            .copyStanzaID, .page, .notificationAccepted, .prunePaging, .releasePostponed, .indexArchive, .pruneArchive, .omemo, .login:
            nil
        }
    }

    private mutating func statement(_ text: String) {
        self.flush()
        self.sql += text + ";\n"
    }

    /// Writes out the rows gathered so far, appends before deletions.
    private mutating func flush() {
        if !self.queueRows.isEmpty {
            self.sql += """
                INSERT INTO queue (\(DeliveryRow.queueColumnList)) VALUES
                \(self.queueRows.joined(separator: ",\n"));

                """
            self.queueRows.removeAll(keepingCapacity: true)
        }
        if !self.relayRows.isEmpty {
            self.sql += """
                INSERT INTO relays (\(DeliveryRow.relayColumnList)) VALUES
                \(self.relayRows.joined(separator: ",\n")) ON CONFLICT (relay_id) DO NOTHING;

                """
            self.relayRows.removeAll(keepingCapacity: true)
        }
        if !self.seenRows.isEmpty {
            self.sql += "INSERT INTO seen_unique_ids (transport, unique_id) VALUES \(self.seenRows.joined(separator: ", ")) ON CONFLICT DO NOTHING;\n"
            self.seenRows.removeAll(keepingCapacity: true)
        }
        if !self.archiveRows.isEmpty {
            self.sql += """
                INSERT INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body, subject, content, copies, bridge_made) VALUES
                \(self.archiveRows.joined(separator: ",\n"));

                """
            self.archiveRows.removeAll(keepingCapacity: true)
        }
        if !self.completed.isEmpty {
            self.sql += "DELETE FROM queue WHERE sequence IN (\(self.completed.map(String.init).joined(separator: ", ")));\n"
            self.completed.removeAll(keepingCapacity: true)
        }
    }

    private static func row(_ values: [String]) -> String {
        "(" + values.joined(separator: ", ") + ")"
    }

    private static func text(_ value: String?) -> String { SQLLiteral.text(value) }

    private mutating func add(_ entry: JournalEntry, at index: Int, plan: JournalCommitPlan) {
        switch entry {
        case .omemo(let account, let changes):
            for write in OMEMORows.writes(changes, account: account) {
                for (sql, values) in OMEMOSchema.statements(write) { self.bound.append(PostgresBoundStatement(numbered: sql, values: values)) }
            }
        case .login(let transport, let login):
            let columns = login.columns(transport: transport)
            self.bound.append(
                PostgresBoundStatement(
                    sql: """
                        INSERT INTO logins (\(StoredLogin.columnList)) VALUES (\((1...columns.count).map { "$\($0)" }.joined(separator: ", ")))
                        ON CONFLICT (transport) DO UPDATE SET user_agent_id = excluded.user_agent_id, token = excluded.token,
                          mechanism = excluded.mechanism, expires_at = excluded.expires_at, password_check = excluded.password_check
                        """,
                    parameters: columns
                ))
        case .enqueue(let delivery, let enqueuedAt, let attempts):
            if plan.touchesQueue(at: index) {
                self.queueRows.append(DeliveryRow.literals(DeliveryRow.queue(delivery, enqueuedAt: enqueuedAt, attempts: attempts)))
            }
            self.highestSequence = max(self.highestSequence, delivery.sequence)
            self.relayRows.append(DeliveryRow.literals(DeliveryRow.relay(delivery, createdAt: enqueuedAt)))
        case .complete(let sequence):
            guard plan.touchesQueue(at: index) else { return }
            // Appends before it are written first (flush order): the row it deletes is there.
            self.completed.append(sequence)
        case .attempted(let sequence, let attempts, let error):
            self.statement("UPDATE queue SET attempts = \(attempts), last_error = \(Self.text(error)) WHERE sequence = \(sequence)")
        case .deadLetter(let delivery, let enqueuedAt, let attempts, let reason):
            self.statement("DELETE FROM queue WHERE sequence = \(delivery.sequence)")
            self.statement("DELETE FROM dead_letters WHERE sequence = \(delivery.sequence)")
            self.highestSequence = max(self.highestSequence, delivery.sequence)
            let row = DeliveryRow.deadLetter(delivery, enqueuedAt: enqueuedAt, attempts: attempts, reason: reason, deadAt: Date())
            self.statement("INSERT INTO dead_letters (\(DeliveryRow.deadLetterColumnList)) VALUES \(DeliveryRow.literals(row))")
        case .removeDeadLetter(let sequence):
            self.statement("DELETE FROM dead_letters WHERE sequence = \(sequence)")
        case .streamSession(let transport, let session):
            // What the server acknowledged leaves the queue in the same transaction as the
            // session state that counts it.
            if let ids = session?.acknowledgedIDs, !ids.isEmpty {
                self.statement("DELETE FROM queue WHERE target_transport = \(Self.text(transport)) AND relay_id IN (\(ids.map(Self.text).joined(separator: ", ")))")
            }
            guard plan.writesSession(transport, at: index) else { return }
            guard let session else {
                self.statement("DELETE FROM stream_sessions WHERE transport = \(Self.text(transport))")
                return
            }
            // A list of strings always encodes; the same text as SQLite's column.
            let ids = String(decoding: (try? JSONEncoder().encode(session.unacknowledgedIDs)) ?? Data(), as: UTF8.self)
            self.statement("""
                INSERT INTO stream_sessions (transport, session_id, location, jid, handled, acknowledged, unacknowledged_ids) VALUES \(Self.row([
                    Self.text(transport), Self.text(session.id), Self.text(session.location), Self.text(session.jid), String(session.handled),
                    String(session.acknowledged), Self.text(ids),
                ]))
                ON CONFLICT (transport) DO UPDATE SET
                  handled = CASE WHEN stream_sessions.session_id = excluded.session_id AND stream_sessions.handled > excluded.handled
                    THEN stream_sessions.handled ELSE excluded.handled END,
                  session_id = excluded.session_id, location = excluded.location, jid = excluded.jid,
                  acknowledged = excluded.acknowledged, unacknowledged_ids = excluded.unacknowledged_ids
                """)
        case .sourcePosition(let transport, let sequence):
            self.statement("UPDATE stream_sessions SET handled = \(sequence) WHERE transport = \(Self.text(transport)) AND handled < \(sequence)")
        case .seen(let transport, let key):
            self.seenRows.append(Self.row([Self.text(transport), Self.text(key)]))
        case .resumePoint(let key, let position):
            guard plan.writesResumePoint(key, at: index) else { return }
            self.statement("""
                INSERT INTO source_checkpoints (transport, checkpoint) VALUES (\(Self.text(key)), \(Self.text(position)))
                ON CONFLICT (transport) DO UPDATE SET checkpoint = excluded.checkpoint
                """)
        case .trimSeen(let transport, let keep):
            let name = Self.text(transport)
            self.statement("""
                DELETE FROM seen_unique_ids WHERE transport = \(name) AND position <= (
                  SELECT position FROM seen_unique_ids WHERE transport = \(name) ORDER BY position DESC LIMIT 1 OFFSET \(keep))
                """)
        case .receipt(let relayID, let target, let displayed, let at):
            let time = SQLLiteral.time(at)
            self.statement("""
                UPDATE relays SET received_at = COALESCE(received_at, \(time)),
                  displayed_at = CASE WHEN \(SQLLiteral.boolean(displayed)) THEN COALESCE(displayed_at, \(time)) ELSE displayed_at END
                WHERE relay_id = \(Self.text(relayID)) AND target_transport = \(Self.text(target.transport))
                  AND \(SQLLiteral.matches("target_address", target.address))
                """)
        case .copyStanzaID(let relayID, let target, let stanzaID):
            self.statement("""
                UPDATE relays SET copy_stanza_id = \(Self.text(stanzaID.rawValue)) WHERE relay_id = \(Self.text(relayID))
                  AND target_transport = \(Self.text(target.transport)) AND \(SQLLiteral.matches("target_address", target.address))
                """)
        case .sourceStanzaID(let source, let sourceID, let stanzaID):
            self.statement("""
                UPDATE relays SET source_stanza_id = \(Self.text(stanzaID.rawValue)) WHERE source_transport = \(Self.text(source.transport))
                  AND \(SQLLiteral.matches("source_address", source.address)) AND source_id = \(Self.text(sourceID))
                """)
        case .page(let page):
            self.statement("""
                INSERT INTO pages (source_transport, source_id, channel, created_at, state) VALUES \(Self.row([
                    Self.text(page.source.transport), Self.text(page.id), Self.text(page.channel), SQLLiteral.time(page.createdAt),
                    Self.text(PageColumn.encode(page)),
                ]))
                ON CONFLICT (source_transport, source_id) DO UPDATE SET channel = excluded.channel, created_at = excluded.created_at, state = excluded.state
                """)
        case .notificationAccepted(let key, let id, let at):
            self.statement("""
                INSERT INTO accepted_notifications (key, message_id, accepted_at) VALUES (\(Self.text(key)), \(Self.text(id)), \(SQLLiteral.time(at)))
                ON CONFLICT (key) DO UPDATE SET message_id = excluded.message_id, accepted_at = excluded.accepted_at
                """)
        case .postpone(let delivery, let releaseAt, let flood):
            // As SQLite's INSERT OR REPLACE: a postponement made again goes last.
            self.statement("DELETE FROM postponed_deliveries WHERE relay_id = \(Self.text(delivery.relayID))")
            self.statement("""
                INSERT INTO postponed_deliveries (relay_id, release_at, flood, delivery) VALUES (\(Self.text(delivery.relayID)),
                  \(SQLLiteral.time(releaseAt)), \(SQLLiteral.boolean(flood)), \(Self.text(PostponedDeliveryColumn.encode(delivery))))
                """)
        case .prunePaging(let pagesBefore, let notificationsBefore):
            self.statement("DELETE FROM pages WHERE created_at <= \(SQLLiteral.time(pagesBefore))")
            self.statement("DELETE FROM accepted_notifications WHERE accepted_at < \(SQLLiteral.time(notificationsBefore))")
        case .releasePostponed(let relayIDs):
            guard !relayIDs.isEmpty else { return }
            self.statement("DELETE FROM postponed_deliveries WHERE relay_id IN (\(relayIDs.map(Self.text).joined(separator: ", ")))")
        case .archive(let row):
            self.archiveRows.append(Self.row([String(row.at)] + row.texts.map(Self.text) + [SQLLiteral.boolean(row.bridgeMade)]))
        case .archiveEdit(let channels, let source, let nick, let sourceID, let body, let at):
            let when = PostgresStateStore.milliseconds(at)
            let set = body.map { "body = \(Self.text($0)), edited_at = \(when)" } ?? "body = '', content = NULL, retracted_at = \(when)"
            for channel in channels {
                self.statement("""
                    UPDATE archive SET \(set) WHERE id = (
                      SELECT id FROM (SELECT id, at, source_id, source_transport, source_address, nick FROM archive
                        WHERE channel = \(Self.text(channel)) AND at >= \(when - PostgresStateStore.editWindow)
                        ORDER BY at DESC, id DESC LIMIT \(PostgresStateStore.editCandidates)) recent
                      WHERE source_id = \(Self.text(sourceID)) AND source_transport = \(Self.text(source.transport))
                        AND COALESCE(source_address, '') = \(Self.text(source.address ?? "")) AND (\(Self.text(nick)) IS NULL OR nick = \(Self.text(nick)))
                      ORDER BY at DESC, id DESC LIMIT 1)
                    """)
            }
        case .indexArchive:
            // The text index is a generated column: it is never behind.
            break
        case .pruneArchive(let channel, let before, let limit):
            self.statement("""
                DELETE FROM archive WHERE id IN (SELECT id FROM archive WHERE channel = \(Self.text(channel))
                  AND at < \(PostgresStateStore.milliseconds(before)) ORDER BY at LIMIT \(limit))
                """)
        }
    }
}
