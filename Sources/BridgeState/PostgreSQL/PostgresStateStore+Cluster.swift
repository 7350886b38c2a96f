import Foundation

/// What several instances on one state need of it beyond ``StateStore`` (issue 26): the
/// queue of one transport as its new owner takes it over, the rows other instances queued
/// for it, and a block of queue sequences of this instance's own.
package protocol SharedQueue: Sendable {
    /// The sequences queued for `transport` now.
    func queuedSequences(transport: String) throws(StateStoreError) -> [Int64]
    /// The queued rows with these sequences (those still queued), in sequence order.
    func queued(sequences: [Int64]) throws(StateStoreError) -> [QueuedDeliveryRecord]
    /// The newest `limit` deduplication keys `transport` handled, oldest first.
    func seenDeduplicationKeys(transport: String, limit: Int) throws(StateStoreError) -> [String]
    /// The first of `size` queue sequences no other instance uses, past all used before.
    func reserveSequences(_ size: Int64) throws(StateStoreError) -> Int64
    /// Tells the other instances (``ControlNotice``), at once.
    func announce(_ notice: ControlNotice, from instance: String) throws(StateStoreError)
    /// The first `limit` queued rows (for `transport`, or all), in sequence order.
    func queued(transport: String?, limit: Int) throws(StateStoreError) -> [QueuedDeliveryRecord]
}

extension PostgresStateStore: SharedQueue {
    package func queuedSequences(transport: String) throws(StateStoreError) -> [Int64] {
        try self.query(.readQueue, "SELECT sequence FROM queue WHERE target_transport = $1 ORDER BY sequence", [transport]).rows
            .compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } }
    }

    package func queued(sequences: [Int64]) throws(StateStoreError) -> [QueuedDeliveryRecord] {
        guard !sequences.isEmpty else { return [] }
        return try self.fetch(
            QueuedDeliveryRecord.self, .readQueue, "SELECT \(Self.queueColumns) FROM queue WHERE sequence = ANY($1::bigint[]) ORDER BY sequence",
            [PostgresArray.text(sequences.map(String.init))]
        )
    }

    package func queued(transport: String?, limit: Int) throws(StateStoreError) -> [QueuedDeliveryRecord] {
        try self.fetch(
            QueuedDeliveryRecord.self, .readQueue,
            "SELECT \(Self.queueColumns) FROM queue WHERE $1::text IS NULL OR target_transport = $1 ORDER BY sequence LIMIT $2::bigint",
            [transport, String(limit)]
        )
    }

    package func announce(_ notice: ControlNotice, from instance: String) throws(StateStoreError) {
        _ = try self.query(.notifyInstances, "SELECT pg_notify($1, $2)", [ControlNotice.channel, notice.payload(from: instance)])
    }

    package func seenDeduplicationKeys(transport: String, limit: Int) throws(StateStoreError) -> [String] {
        try self.query(.readQueue, """
            SELECT unique_id FROM (SELECT unique_id, position FROM seen_unique_ids WHERE transport = $1 ORDER BY position DESC LIMIT $2) recent
            ORDER BY position
            """, [transport, String(limit)]).rows.compactMap { $0.first ?? nil }
    }

    package func reserveSequences(_ size: Int64) throws(StateStoreError) -> Int64 {
        try self.withConnection(.enqueue) { connection throws(PostgresError) in try LeaseTable(connection: connection).reserveSequences(size) }
    }
}
