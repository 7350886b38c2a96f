import OMEMOState

/// OMEMO state (issue 41) in PostgreSQL: the same rows as SQLite's (``OMEMORows``), read when
/// an OMEMO account starts on this instance (as it takes the account's lease over) and by
/// the `omemo` commands (on any instance): read in one snapshot, since another instance
/// may commit while they read.
extension PostgresStateStore {
    package func omemoState(account: String) throws(StateStoreError) -> OMEMOAccountState? {
        // One snapshot of the four tables (REPEATABLE READ): no commit of another instance
        // between two of the reads can pair keys with a device they do not belong to.
        let (device, keys, trust, lists) = try self.withConnection(.readOMEMO) { connection throws(PostgresError) in
            func rows(_ sql: String) throws(PostgresError) -> [[String]] {
                try connection.query(sql, [account]).rows.map { $0.map { $0 ?? "" } }
            }
            try connection.run(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do throws(PostgresError) {
                let read = (
                    try rows("SELECT device_id, identity_public, identity_private, next_prekey_id FROM omemo_device WHERE account = $1").first,
                    try rows("SELECT kind, jid, id, record FROM omemo_keys WHERE account = $1"),
                    try rows("SELECT jid, identity_key, trust FROM omemo_trust WHERE account = $1"),
                    try rows("SELECT jid, devices FROM omemo_device_lists WHERE account = $1")
                )
                try connection.run(script: "COMMIT")
                return read
            } catch {
                if connection.isOpen { _ = try? connection.run(script: "ROLLBACK") }
                throw error
            }
        }
        do {
            return try OMEMORows.state(
                device: try device.map { row throws(OMEMORowError) in
                    guard row.count == 4, let id = Int64(row[0]), let next = Int64(row[3]) else { throw OMEMORowError("an omemo_device row that does not read") }
                    return (deviceID: id, publicKey: row[1], privateKey: row[2], nextPreKeyID: next)
                },
                keys: try keys.map { row throws(OMEMORowError) in
                    guard row.count == 4, let id = Int64(row[2]) else { throw OMEMORowError("an omemo_keys row that does not read") }
                    return (kind: row[0], jid: row[1], id: id, record: row[3])
                },
                trust: try trust.map { row throws(OMEMORowError) in
                    guard row.count == 3 else { throw OMEMORowError("an omemo_trust row that does not read") }
                    return (jid: row[0], identityKey: row[1], level: row[2])
                },
                deviceLists: try lists.map { row throws(OMEMORowError) in
                    guard row.count == 2 else { throw OMEMORowError("an omemo_device_lists row that does not read") }
                    return (jid: row[0], devices: row[1])
                }
            )
        } catch {
            throw StateStoreError(operation: .readOMEMO, location: self.location, underlying: "\(error)")
        }
    }

    package func saveOMEMO(_ changes: [OMEMOStateChange], account: String) throws(StateStoreError) {
        try self.apply([.omemo(account: account, changes)], intakeThrough: nil, as: .saveOMEMO)
    }

    /// The accounts with an OMEMO device in the state.
    package func omemoAccounts() throws(StateStoreError) -> [String] {
        try self.query(.readOMEMO, "SELECT account FROM omemo_device ORDER BY account").rows.compactMap { $0.first ?? nil }
    }
}
