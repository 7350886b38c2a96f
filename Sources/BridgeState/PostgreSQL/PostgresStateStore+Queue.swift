import Foundation
import TransportCore

/// The durable queue, dead letters and sources in PostgreSQL (the same as
/// `SQLiteStateStore+Queue.swift` and `+DeadLetters.swift`).
extension PostgresStateStore {
    package static var queueColumns: String {
        """
        sequence, channel, target_transport, target_address, body, original_body, nick, subject, type, source_transport, source_address,
          source_id, relay_id, content, enqueued_at, attempts, last_error
        """
    }

    package func enqueue(_ deliveries: [Delivery]) throws(StateStoreError) -> [Delivery] {
        guard !deliveries.isEmpty else { return [] }
        let now = self.now()
        let rows = try self.query(.enqueue, "SELECT nextval('queue_sequence') FROM generate_series(1, $1)", [String(deliveries.count)]).rows
        let sequences = rows.compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } }
        guard sequences.count == deliveries.count else {
            throw StateStoreError(operation: .enqueue, location: self.location, underlying: "the queue's sequence gave \(sequences.count) of \(deliveries.count) numbers")
        }
        var stored = deliveries
        for index in stored.indices { stored[index].sequence = sequences[index] }
        try self.apply(stored.map { .enqueue($0, enqueuedAt: now, attempts: 0) }, intakeThrough: nil, as: .enqueue)
        return stored
    }

    package func pending(transport: String, limit: Int) throws(StateStoreError) -> [Delivery] {
        precondition(limit > 0, "pending(transport:limit:) needs a positive limit, got \(limit)")
        return try self.fetch(
            QueuedDeliveryRecord.self, .readQueue, "SELECT \(Self.queueColumns) FROM queue WHERE target_transport = $1 ORDER BY sequence LIMIT $2",
            [transport, String(limit)]
        ).map(\.delivery)
    }

    @discardableResult
    package func complete(sequence: Int64) throws(StateStoreError) -> Bool {
        try self.query(.complete, "DELETE FROM queue WHERE sequence = $1", [String(sequence)]).affected > 0
    }

    package func complete(sequences: [Int64]) throws(StateStoreError) {
        guard !sequences.isEmpty else { return }
        try self.script(.complete, "DELETE FROM queue WHERE sequence IN (\(sequences.map(String.init).joined(separator: ", ")))")
    }

    package func completeAcknowledged(transport: String, relayIDs: [String], firstAttemptsOnly: Bool) throws(StateStoreError) {
        guard !relayIDs.isEmpty else { return }
        try self.script(.complete, """
            DELETE FROM queue WHERE target_transport = \(SQLLiteral.text(transport)) AND relay_id IN (\(relayIDs.map(SQLLiteral.text).joined(separator: ", ")))
              AND (attempts = 0 OR NOT \(SQLLiteral.boolean(firstAttemptsOnly)))
            """)
    }

    package func pendingCount(transport: String?) throws(StateStoreError) -> Int {
        guard let transport else { return Int(try self.integer(.readQueue, "SELECT COUNT(*) FROM queue")) }
        return Int(try self.integer(.readQueue, "SELECT COUNT(*) FROM queue WHERE target_transport = $1", [transport]))
    }

    package func allPendingTransports() throws(StateStoreError) -> [String] {
        try self.query(.readQueue, "SELECT DISTINCT target_transport FROM queue ORDER BY target_transport").rows.compactMap { $0.first ?? nil }
    }

    package func loadQueue() throws(StateStoreError) -> [QueuedDeliveryRecord] {
        try self.fetch(QueuedDeliveryRecord.self, .readQueue, "SELECT \(Self.queueColumns) FROM queue ORDER BY sequence")
    }

    package func oldestPending(transport: String) throws(StateStoreError) -> Date? {
        let rows = try self.query(.readQueue, "SELECT enqueued_at FROM queue WHERE target_transport = $1 ORDER BY sequence LIMIT 1", [transport]).rows
        return rows.first?.first.flatMap { $0 }.flatMap(StorageTimestamp.date)
    }

    package func startingPoint(transport: String) throws(StateStoreError) -> StoredStartingPoint {
        let sessions = try self.fetch(
            StreamSessionRecord.self, .readQueue,
            "SELECT transport, session_id, location, jid, handled, acknowledged, unacknowledged_ids FROM stream_sessions WHERE transport = $1", [transport]
        )
        let login = try self.query(.readQueue, "SELECT \(StoredLogin.columnList) FROM logins WHERE transport = $1", [transport]).rows.first.flatMap { row in
            row.count == 6 ? StoredLogin(userAgentID: row[1], token: row[2], mechanism: row[3], expiry: row[4], passwordCheck: row[5]) : nil
        }
        let resumePoint = try self.query(.readQueue, "SELECT checkpoint FROM source_checkpoints WHERE transport = $1", [transport]).rows.first?.first ?? nil
        return StoredStartingPoint(session: sessions.first?.session, login: login, resumePoint: resumePoint)
    }

    package func logins() throws(StateStoreError) -> [String: StoredLogin] {
        var logins: [String: StoredLogin] = [:]
        for row in try self.query(.readQueue, "SELECT \(StoredLogin.columnList) FROM logins").rows {
            guard row.count == 6, let transport = row[0] else { continue }
            logins[transport] = StoredLogin(userAgentID: row[1], token: row[2], mechanism: row[3], expiry: row[4], passwordCheck: row[5])
        }
        return logins
    }

    package func streamSessions() throws(StateStoreError) -> [String: StoredStreamSession] {
        let records = try self.fetch(
            StreamSessionRecord.self, .readQueue,
            "SELECT transport, session_id, location, jid, handled, acknowledged, unacknowledged_ids FROM stream_sessions"
        )
        var sessions: [String: StoredStreamSession] = [:]
        for record in records { sessions[record.transport] = record.session }
        return sessions
    }

    package func resumePoints() throws(StateStoreError) -> [String: String] {
        var positions: [String: String] = [:]
        for row in try self.query(.readQueue, "SELECT transport, checkpoint FROM source_checkpoints").rows {
            if let key = row[0], let position = row[1] { positions[key] = position }
        }
        return positions
    }

    package func seenDeduplicationKeys(limit: Int) throws(StateStoreError) -> [String: [String]] {
        let rows = try self.query(.readQueue, """
            SELECT transport, unique_id FROM (
              SELECT transport, unique_id, position, ROW_NUMBER() OVER (PARTITION BY transport ORDER BY position DESC) AS age
              FROM seen_unique_ids) recent WHERE age <= $1 ORDER BY position
            """, [String(limit)]).rows
        var seen: [String: [String]] = [:]
        for row in rows {
            if let transport = row[0], let id = row[1] { seen[transport, default: []].append(id) }
        }
        return seen
    }

    // MARK: - Dead letters

    package static var deadLetterColumns: String {
        """
        sequence, channel, target_transport, target_address, body, original_body, nick, subject, type, source_transport, source_address,
          source_id, relay_id, content, enqueued_at, attempts, reason, dead_at
        """
    }

    package func deadLetters(transport: String?) throws(StateStoreError) -> [DeadLetterRecord] {
        guard let transport else {
            return try self.fetch(DeadLetterRecord.self, .readDeadLetters, "SELECT \(Self.deadLetterColumns) FROM dead_letters ORDER BY sequence")
        }
        return try self.fetch(
            DeadLetterRecord.self, .readDeadLetters, "SELECT \(Self.deadLetterColumns) FROM dead_letters WHERE target_transport = $1 ORDER BY sequence",
            [transport]
        )
    }

    package func deadLetterCount(transport: String) throws(StateStoreError) -> Int {
        Int(try self.integer(.readDeadLetters, "SELECT COUNT(*) FROM dead_letters WHERE target_transport = $1", [transport]))
    }

    @discardableResult
    package func retryDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int {
        let chosen = sequences.map { "WHERE sequence IN (\($0.isEmpty ? "NULL" : $0.map(String.init).joined(separator: ", ")))" } ?? ""
        let now = SQLLiteral.time(self.now())
        // Fresh sequences after every existing one, in the dead letters' order.
        return try self.script(.editDeadLetters, """
            WITH retried AS (DELETE FROM dead_letters \(chosen) RETURNING *),
            queued AS (
              INSERT INTO queue (sequence, channel, target_transport, target_address, body, original_body, nick, subject, type, source_transport,
                source_address, source_id, relay_id, content, enqueued_at, attempts)
              SELECT nextval('queue_sequence'), channel, target_transport, target_address, body, original_body, nick, subject, type, source_transport,
                source_address, source_id, relay_id, content, \(now), 0
              FROM (SELECT * FROM retried ORDER BY sequence) ordered
              RETURNING 1)
            SELECT COUNT(*) FROM queued
            """).rows.first?.first.flatMap { $0 }.flatMap { Int($0) } ?? 0
    }

    @discardableResult
    package func dropDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int {
        guard let sequences else { return try self.script(.editDeadLetters, "DELETE FROM dead_letters").affected }
        guard !sequences.isEmpty else { return 0 }
        return try self.script(.editDeadLetters, "DELETE FROM dead_letters WHERE sequence IN (\(sequences.map(String.init).joined(separator: ", ")))").affected
    }
}
