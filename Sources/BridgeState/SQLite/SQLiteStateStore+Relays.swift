import Foundation
import GRDB
import TransportCore

/// The relay id map: which ids each source stanza was relayed as.
extension SQLiteStateStore {
    /// Records the relay ids of `deliveries`. Recording the same relay id again changes
    /// nothing (`enqueue` already records them; this is for deliveries sent without queueing).
    package func recordRelays(_ deliveries: [Delivery]) throws(StateStoreError) {
        let createdAt = self.now()
        try self.write(.recordRelays) { db in try Self.insertRelays(deliveries, createdAt: createdAt, in: db) }
    }

    /// Every relayed copy of the stanza `id` received from `transport`/`address`, oldest first.
    package func relays(forSource transport: String, address: String?, id: String) throws(StateStoreError) -> [RelayRecord] {
        try self.read(.readRelays) { db in
            try RelayRecord
                .filter(
                    RelayRecord.Columns.sourceTransport == transport
                        && RelayRecord.Columns.sourceAddress == address
                        && RelayRecord.Columns.sourceID == id
                )
                .order(Column.rowID)
                .fetchAll(db)
        }
    }

    /// The ids each endpoint knows the message `id` by, where `source` refers to it (a
    /// correction, reply, reaction or retraction): its own message, or a copy it got from us.
    /// In a room the id may be the room's stanza-id of the message or of our copy.
    ///
    /// - Parameters:
    ///   - ownOnly: only the source's own message counts (a correction or retraction: no one
    ///     edits what someone else wrote).
    ///   - nick: in a room, the own message must also be this sender's.
    package func references(to id: String, from source: Endpoint, ownOnly: Bool, nick: String?) throws(StateStoreError) -> ReferenceMap {
        let own = try self.read(.readRelays) { db in
            let mine = RelayRecord.filter(RelayRecord.Columns.sourceTransport == source.transport && RelayRecord.Columns.sourceAddress == source.address)
            // Two lookups, each on its own index.
            var rows = try mine.filter(RelayRecord.Columns.sourceID == id).order(Column.rowID).fetchAll(db)
            if rows.isEmpty { rows = try mine.filter(RelayRecord.Columns.sourceStanzaID == id).order(Column.rowID).fetchAll(db) }
            return rows
        }.filter { nick == nil || $0.sourceNick == nick }
        guard own.isEmpty, !ownOnly else { return ReferenceMap(own: own, received: nil, siblings: []) }
        let target = source.normalized
        let copy = try self.read(.readRelays) { db in
            try RelayRecord.fetchOne(db, key: id)
                ?? RelayRecord.filter(
                    RelayRecord.Columns.copyStanzaID == id && RelayRecord.Columns.targetTransport == target.transport
                        && RelayRecord.Columns.targetAddress == target.address
                ).fetchOne(db)
        }
        guard let received = copy, received.target.normalized == target else { return ReferenceMap() }
        let siblings = try self.relays(forSource: received.sourceTransport, address: received.sourceAddress, id: received.sourceID)
        return ReferenceMap(own: [], received: received, siblings: siblings)
    }

    /// The copy sent with relay id `id`, if the id map still has it.
    package func relay(_ id: String) throws(StateStoreError) -> RelayRecord? {
        try self.read(.readRelays) { db in try RelayRecord.fetchOne(db, key: id) }
    }

    /// Each of `relayIDs` that is a dead letter, with its reason.
    package func deadLetterReasons(relayIDs: [String]) throws(StateStoreError) -> [String: String] {
        guard !relayIDs.isEmpty else { return [:] }
        return try self.read(.readRelays) { db in
            var reasons: [String: String] = [:]
            for letter in try DeadLetterRecord.filter(relayIDs.contains(Column("relay_id"))).fetchAll(db) {
                reasons[letter.relayID] = letter.reason
            }
            return reasons
        }
    }

    /// Whether `id` is one this bridge generated for a relayed copy: an inbound message
    /// carrying it is an echo of our own relay and must not be relayed again.
    package func isRelayID(_ id: String) throws(StateStoreError) -> Bool {
        try self.read(.readRelays) { db in try RelayRecord.exists(db, key: id) }
    }

    /// Forgets relays recorded before `date`; returns how many. The map otherwise grows
    /// with every message, and receipts or corrections for old messages are rare.
    @discardableResult
    package func pruneRelays(before date: Date) throws(StateStoreError) -> Int {
        try self.write(.pruneRelays) { db in
            // Rows are appended in time order, so the first recent one bounds the old ones:
            // the scan reads only what it then deletes (no index on created_at to keep up).
            let end = try Int64.fetchOne(db, sql: "SELECT rowid FROM relays WHERE created_at >= ? ORDER BY rowid LIMIT 1", arguments: [date])
            if let end {
                try db.execute(sql: "DELETE FROM relays WHERE rowid < ?", arguments: [end])
            } else {
                try db.execute(sql: "DELETE FROM relays")
            }
            return db.changesCount
        }
    }

    /// Inserts the id map rows for `deliveries`, ignoring relay ids already present.
    package static func insertRelays(_ deliveries: [Delivery], createdAt: Date, in db: Database) throws {
        for delivery in deliveries {
            try db.cachedStatement(sql: Self.insertRelay).execute(arguments: Self.arguments(DeliveryRow.relay(delivery, createdAt: createdAt)))
        }
    }
}
