import Foundation
import TransportCore

/// The relay id map in PostgreSQL (the same as `SQLiteStateStore+Relays.swift`); SQLite's
/// rowid order is the `position` column here.
extension PostgresStateStore {
    package static var relayColumns: String {
        """
        relay_id, channel, source_transport, source_address, source_id, target_transport, target_address, created_at, received_at, displayed_at,
          source_stanza_id, copy_stanza_id, source_nick
        """
    }

    /// `column = $n`, or `column IS NULL` for a nil value: SQLite's `IS`, answered from an
    /// index. Every parameter must appear for PostgreSQL to type it, so for nil `$n` is
    /// sent as an empty text and only checked to be there.
    package static func matches(_ column: String, _ value: String?, _ parameter: Int) -> String {
        value == nil ? "(\(column) IS NULL AND $\(parameter)::text IS NOT NULL)" : "\(column) = $\(parameter)"
    }

    package func recordRelays(_ deliveries: [Delivery]) throws(StateStoreError) {
        guard !deliveries.isEmpty else { return }
        let createdAt = self.now()
        let rows = deliveries.map { DeliveryRow.literals(DeliveryRow.relay($0, createdAt: createdAt)) }
        try self.script(.recordRelays, """
            INSERT INTO relays (\(DeliveryRow.relayColumnList))
            VALUES \(rows.joined(separator: ", ")) ON CONFLICT (relay_id) DO NOTHING
            """)
    }

    package func relays(forSource transport: String, address: String?, id: String) throws(StateStoreError) -> [RelayRecord] {
        try self.fetch(RelayRecord.self, .readRelays, """
            SELECT \(Self.relayColumns) FROM relays WHERE source_transport = $1 AND \(Self.matches("source_address", address, 2)) AND source_id = $3
            ORDER BY position
            """, [transport, address ?? "", id])
    }

    package func references(to id: String, from source: Endpoint, ownOnly: Bool, nick: String?) throws(StateStoreError) -> ReferenceMap {
        let mine = "SELECT \(Self.relayColumns) FROM relays WHERE source_transport = $1 AND \(Self.matches("source_address", source.address, 2))"
        // Two lookups, each on its own index.
        let parameters = [source.transport, source.address ?? "", id]
        var own = try self.fetch(RelayRecord.self, .readRelays, mine + " AND source_id = $3 ORDER BY position", parameters)
        if own.isEmpty {
            own = try self.fetch(RelayRecord.self, .readRelays, mine + " AND source_stanza_id = $3 ORDER BY position", parameters)
        }
        own = own.filter { nick == nil || $0.sourceNick == nick }
        guard own.isEmpty, !ownOnly else { return ReferenceMap(own: own, received: nil, siblings: []) }
        let target = source.normalized
        var copy = try self.relay(id)
        if copy == nil {
            copy = try self.fetch(RelayRecord.self, .readRelays, """
            SELECT \(Self.relayColumns) FROM relays WHERE copy_stanza_id = $1 AND target_transport = $2 AND \(Self.matches("target_address", target.address, 3))
            LIMIT 1
            """, [id, target.transport, target.address ?? ""]).first
        }
        guard let received = copy, received.target.normalized == target else { return ReferenceMap() }
        let siblings = try self.relays(forSource: received.sourceTransport, address: received.sourceAddress, id: received.sourceID)
        return ReferenceMap(own: [], received: received, siblings: siblings)
    }

    package func relay(_ id: String) throws(StateStoreError) -> RelayRecord? {
        try self.fetch(RelayRecord.self, .readRelays, "SELECT \(Self.relayColumns) FROM relays WHERE relay_id = $1", [id]).first
    }

    package func deadLetterReasons(relayIDs: [String]) throws(StateStoreError) -> [String: String] {
        guard !relayIDs.isEmpty else { return [:] }
        let rows = try self.script(
            .readRelays, "SELECT relay_id, reason FROM dead_letters WHERE relay_id IN (\(relayIDs.map(SQLLiteral.text).joined(separator: ", ")))"
        ).rows
        var reasons: [String: String] = [:]
        for row in rows {
            if let id = row[0], let reason = row[1] { reasons[id] = reason }
        }
        return reasons
    }

    package func isRelayID(_ id: String) throws(StateStoreError) -> Bool {
        try self.integer(.readRelays, "SELECT COUNT(*) FROM relays WHERE relay_id = $1", [id]) > 0
    }

    @discardableResult
    package func pruneRelays(before date: Date) throws(StateStoreError) -> Int {
        // Rows are appended in time order, so the first recent one bounds the old ones.
        try self.query(.pruneRelays, """
            DELETE FROM relays WHERE position < COALESCE(
              (SELECT position FROM relays WHERE created_at >= $1 ORDER BY position LIMIT 1), (SELECT MAX(position) + 1 FROM relays))
            """, [StorageTimestamp.text(date)]).affected
    }

    // MARK: - Routes

    package func routes() throws(StateStoreError) -> [RouteChange] {
        try self.fetch(RouteRecord.self, .readRoutes, "SELECT id, channel, transport, address, action, direction, changed_at, room FROM routes ORDER BY id")
            .map(\.change)
    }

    package func addRoute(channel: String, member: ChannelMember) throws(StateStoreError) {
        try self.replaceRoute(RouteChange(
            channel: channel, endpoint: member.endpoint, kind: .add(member.direction), changedAt: self.now(), room: member.room
        ), as: .addRoute)
    }

    package func removeRoute(channel: String, endpoint: Endpoint) throws(StateStoreError) {
        try self.replaceRoute(RouteChange(channel: channel, endpoint: endpoint, kind: .remove, changedAt: self.now()), as: .removeRoute)
    }

    /// Deletes the member's previous change and appends this one, so the newest sorts last.
    private func replaceRoute(_ change: RouteChange, as operation: StateStoreError.Operation) throws(StateStoreError) {
        let record = RouteRecord(change)
        let channel = SQLLiteral.text(record.channel), transport = SQLLiteral.text(record.transport)
        try self.script(operation, """
            DELETE FROM routes WHERE channel = \(channel) AND transport = \(transport) AND \(SQLLiteral.matches("address", record.address));
            INSERT INTO routes (channel, transport, address, action, direction, changed_at, room) VALUES (\(channel), \(transport), \(SQLLiteral.text(record.address)),
              \(SQLLiteral.text(record.action.rawValue)), \(SQLLiteral.text(record.direction?.rawValue)), \(SQLLiteral.time(record.changedAt)),
              \(SQLLiteral.text(record.room)))
            """)
    }
}
