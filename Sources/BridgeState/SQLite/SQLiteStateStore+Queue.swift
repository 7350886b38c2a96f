import Foundation
import GRDB
import TransportCore

/// The durable outbound queue: a delivery is written before it is attempted and removed
/// only when its target transport has taken it, so a restart resumes where it stopped.
extension SQLiteStateStore {
    /// Stores `deliveries` in one transaction, with their relay ids, and returns them in the
    /// same order with `sequence` set (increasing, never reused).
    package func enqueue(_ deliveries: [Delivery]) throws(StateStoreError) -> [Delivery] {
        let now = self.now()
        return try self.write(.enqueue) { db in
            var stored: [Delivery] = []
            stored.reserveCapacity(deliveries.count)
            for var delivery in deliveries {
                delivery.sequence = try Self.insertNumbered(delivery, enqueuedAt: now, in: db)
                stored.append(delivery)
            }
            try Self.insertRelays(deliveries, createdAt: now, in: db)
            return stored
        }
    }

    /// The oldest `limit` deliveries waiting for `transport`, in queue order.
    package func pending(transport: String, limit: Int) throws(StateStoreError) -> [Delivery] {
        precondition(limit > 0, "pending(transport:limit:) needs a positive limit, got \(limit)")
        return try self.read(.readQueue) { db in
            try QueuedDeliveryRecord
                .filter(QueuedDeliveryRecord.Columns.targetTransport == transport)
                .order(QueuedDeliveryRecord.Columns.sequence)
                .limit(limit)
                .fetchAll(db)
                .map(\.delivery)
        }
    }

    /// Removes a delivered (or permanently failed) delivery. Returns false if it was not
    /// queued, e.g. completed twice.
    @discardableResult
    package func complete(sequence: Int64) throws(StateStoreError) -> Bool {
        try self.write(.complete) { db in try QueuedDeliveryRecord.deleteOne(db, key: sequence) }
    }

    /// Removes `transport`'s deliveries that its server acknowledged before a restart
    /// (their ids from the stream ledger). Only first attempts: a delivery queued again
    /// after a bounce keeps its relay id, and must not leave with the copy that bounced.
    /// - Parameter firstAttemptsOnly: only deliveries never tried again (a retried one may
    ///   have bounced after its acknowledgement).
    package func completeAcknowledged(transport: String, relayIDs: [String], firstAttemptsOnly: Bool) throws(StateStoreError) {
        guard !relayIDs.isEmpty else { return }
        try self.write(.complete) { db in try Self.deleteQueued(transport: transport, relayIDs: relayIDs, firstAttemptsOnly: firstAttemptsOnly, in: db) }
    }

    /// Deletes `transport`'s queued deliveries with these relay ids in one scan of the
    /// queue (no index by relay id: such lookups are rare, and the queue is small).
    package static func deleteQueued(transport: String, relayIDs: [String], firstAttemptsOnly: Bool = false, in db: Database) throws {
        guard !relayIDs.isEmpty else { return }
        let ids = String(decoding: try JSONEncoder().encode(relayIDs), as: UTF8.self)
        try db.cachedStatement(sql: """
            DELETE FROM queue WHERE target_transport = ? AND relay_id IN (SELECT value FROM json_each(?)) AND (attempts = 0 OR NOT ?)
            """).execute(arguments: [transport, ids, firstAttemptsOnly])
    }

    /// Removes several delivered deliveries in one transaction.
    package func complete(sequences: [Int64]) throws(StateStoreError) {
        guard !sequences.isEmpty else { return }
        try self.write(.complete) { db in _ = try QueuedDeliveryRecord.deleteAll(db, keys: sequences) }
    }

    /// How many deliveries wait for `transport`, or for every transport when nil.
    package func pendingCount(transport: String?) throws(StateStoreError) -> Int {
        try self.read(.readQueue) { db in
            var request = QueuedDeliveryRecord.all()
            if let transport {
                request = request.filter(QueuedDeliveryRecord.Columns.targetTransport == transport)
            }
            return try request.fetchCount(db)
        }
    }

    /// The transports with deliveries waiting, sorted by name.
    package func allPendingTransports() throws(StateStoreError) -> [String] {
        try self.read(.readQueue) { db in
            try QueuedDeliveryRecord
                .select(QueuedDeliveryRecord.Columns.targetTransport, as: String.self)
                .distinct()
                .order(QueuedDeliveryRecord.Columns.targetTransport)
                .fetchAll(db)
        }
    }

    /// Every queued delivery with its stored attempt count and enqueue time, in queue
    /// order: what the relay's in-memory queues start from.
    package func loadQueue() throws(StateStoreError) -> [QueuedDeliveryRecord] {
        try self.read(.readQueue) { db in
            try QueuedDeliveryRecord.order(QueuedDeliveryRecord.Columns.sequence).fetchAll(db)
        }
    }

    /// The highest sequence ever used by the queue or the dead letters (0 when none).
    package func lastSequence() throws(StateStoreError) -> Int64 {
        try self.read(.readQueue) { db in
            let assigned = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'queue'") ?? 0
            let queued = try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM queue") ?? 0
            let dead = try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM dead_letters") ?? 0
            return max(assigned, queued, dead)
        }
    }

    /// How far the intake log is applied (``IntakeLogFile/Position``); nil before it ever was.
    package func intakeApplied() throws(StateStoreError) -> IntakeLogFile.Position? {
        try self.read(.replayIntakeLog) { db in
            try Row.fetchOne(db, sql: #"SELECT epoch, "end" FROM intake_applied WHERE id = 0"#).map { row in
                IntakeLogFile.Position(epoch: UInt64(bitPattern: row["epoch"] as Int64), end: row["end"])
            }
        }
    }

    /// The enqueue time of the oldest delivery waiting for `transport`.
    package func oldestPending(transport: String) throws(StateStoreError) -> Date? {
        try self.read(.readQueue) { db in
            try Date.fetchOne(db, sql: "SELECT enqueued_at FROM queue WHERE target_transport = ? ORDER BY sequence LIMIT 1", arguments: [transport])
        }
    }
}

extension SQLiteStateStore {
    /// Every account's stored stream management session, by account name.
    package func streamSessions() throws(StateStoreError) -> [String: StoredStreamSession] {
        try self.read(.readQueue) { db in
            var sessions: [String: StoredStreamSession] = [:]
            for record in try StreamSessionRecord.fetchAll(db) { sessions[record.transport] = record.session }
            return sessions
        }
    }

    package func startingPoint(transport: String) throws(StateStoreError) -> StoredStartingPoint {
        try self.read(.readQueue) { db in
            let login = try Row.fetchOne(db, sql: "SELECT \(StoredLogin.columnList) FROM logins WHERE transport = ?", arguments: [transport]).flatMap { row in
                StoredLogin(
                    userAgentID: row["user_agent_id"], token: row["token"], mechanism: row["mechanism"], expiry: row["expires_at"],
                    passwordCheck: row["password_check"]
                )
            }
            return StoredStartingPoint(
                session: try StreamSessionRecord.fetchOne(db, key: transport)?.session,
                login: login,
                resumePoint: try String.fetchOne(db, sql: "SELECT checkpoint FROM source_checkpoints WHERE transport = ?", arguments: [transport])
            )
        }
    }

    /// Every account's login state (``StoredLogin``), by account name.
    package func logins() throws(StateStoreError) -> [String: StoredLogin] {
        try self.read(.readQueue) { db in
            var logins: [String: StoredLogin] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT \(StoredLogin.columnList) FROM logins") {
                let transport: String = row["transport"]
                logins[transport] = StoredLogin(
                    userAgentID: row["user_agent_id"], token: row["token"], mechanism: row["mechanism"], expiry: row["expires_at"],
                    passwordCheck: row["password_check"]
                )
            }
            return logins
        }
    }

    /// Every stored resume point's position (``ResumePoint``), by storage key (a transport's
    /// name, or the key its transport gave a room). The table keeps its first name.
    package func resumePoints() throws(StateStoreError) -> [String: String] {
        try self.read(.readQueue) { db in
            var positions: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT transport, checkpoint FROM source_checkpoints") {
                positions[row["transport"]] = row["checkpoint"]
            }
            return positions
        }
    }

    /// The newest `limit` deduplication keys each transport handled, oldest first.
    package func seenDeduplicationKeys(limit: Int) throws(StateStoreError) -> [String: [String]] {
        try self.read(.readQueue) { db in
            var seen: [String: [String]] = [:]
            let rows = try Row.fetchAll(db, sql: """
                SELECT transport, unique_id FROM (
                  SELECT transport, unique_id, position, ROW_NUMBER() OVER (PARTITION BY transport ORDER BY position DESC) AS age
                  FROM seen_unique_ids) WHERE age <= ? ORDER BY position
                """, arguments: [limit])
            for row in rows { seen[row["transport"], default: []].append(row["unique_id"]) }
            return seen
        }
    }
}
