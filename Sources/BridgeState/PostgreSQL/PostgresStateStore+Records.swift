import Foundation

/// Paging, postponed deliveries, gateway registrations and roster mirror snapshots in
/// PostgreSQL (the same as the SQLite store's).
extension PostgresStateStore {
    package func pages(since: Date) throws(StateStoreError) -> [Page] {
        try self.query(.readPages, "SELECT state FROM pages WHERE created_at >= $1 ORDER BY created_at", [StorageTimestamp.text(since)])
            .rows.compactMap { $0.first.flatMap { $0 }.flatMap(PageColumn.decode) }
    }

    package func acceptedNotifications(since: Date) throws(StateStoreError) -> [(key: String, id: String, at: Date)] {
        try self.query(.readPages, "SELECT key, message_id, accepted_at FROM accepted_notifications WHERE accepted_at >= $1", [StorageTimestamp.text(since)])
            .rows.compactMap { row in
                guard let key = row[0], let id = row[1], let at = row[2].flatMap(StorageTimestamp.date) else { return nil }
                return (key, id, at)
            }
    }

    package func postponedDeliveries() throws(StateStoreError) -> [PostponedDeliveries.Postponement] {
        try self.query(.readPostponedDeliveries, "SELECT release_at, flood, delivery FROM postponed_deliveries ORDER BY position").rows.compactMap { row in
            guard let releaseAt = row[0].flatMap(StorageTimestamp.date), let delivery = row[2].flatMap(PostponedDeliveryColumn.decode) else { return nil }
            return PostponedDeliveries.Postponement(delivery: delivery, releaseAt: releaseAt, flood: row[1] == "t")
        }
    }

    package func gatewayRegistrations() throws(StateStoreError) -> [GatewayRegistrationRecord] {
        try self.fetch(
            GatewayRegistrationRecord.self, .readGatewayRegistrations,
            #"SELECT gateway, "user", address, password, registered_at FROM gateway_registrations ORDER BY gateway, "user""#
        )
    }

    package func saveGatewayRegistration(_ record: GatewayRegistrationRecord) throws(StateStoreError) {
        try self.query(.saveGatewayRegistration, #"""
            INSERT INTO gateway_registrations (gateway, "user", address, password, registered_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (gateway, "user") DO UPDATE SET address = excluded.address, password = excluded.password, registered_at = excluded.registered_at
            """#, [record.gateway, record.user, record.address, record.password, StorageTimestamp.text(record.registeredAt)])
    }

    @discardableResult
    package func removeGatewayRegistrations(gateway: String?, user: String) throws(StateStoreError) -> Int {
        try self.query(
            .removeGatewayRegistration, #"DELETE FROM gateway_registrations WHERE "user" = $1 AND ($2::text IS NULL OR gateway = $2)"#,
            [user.lowercased(), gateway]
        ).affected
    }

    package func rosterMirrorSnapshot(id: String) throws(StateStoreError) -> RosterMirrorSnapshot {
        let rows = try self.query(.readRosterMirror, "SELECT snapshot_json FROM roster_mirror_snapshots WHERE mirror_id = $1", [id]).rows
        guard let json = rows.first?.first ?? nil else { return RosterMirrorSnapshot() }
        do {
            return try JSONDecoder().decode(RosterMirrorSnapshot.self, from: Data(json.utf8))
        } catch {
            throw StateStoreError(operation: .readRosterMirror, location: self.location, error: error)
        }
    }

    package func saveRosterMirrorSnapshot(_ snapshot: RosterMirrorSnapshot, id: String) throws(StateStoreError) {
        let json: String
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            json = String(decoding: try encoder.encode(snapshot), as: UTF8.self)
        } catch {
            throw StateStoreError(operation: .saveRosterMirror, location: self.location, error: error)
        }
        try self.query(.saveRosterMirror, """
            INSERT INTO roster_mirror_snapshots (mirror_id, snapshot_json) VALUES ($1, $2)
            ON CONFLICT (mirror_id) DO UPDATE SET snapshot_json = excluded.snapshot_json
            """, [id, json])
    }
}
