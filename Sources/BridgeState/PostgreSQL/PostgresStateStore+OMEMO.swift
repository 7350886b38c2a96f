import OMEMOState

/// OMEMO state (issue 41) in PostgreSQL: the same rows as SQLite's (``OMEMORows``), read when
/// an OMEMO account starts on this instance (it holds the account's lease: nobody else
/// writes them meanwhile) and by the `omemo` commands.
extension PostgresStateStore {
    package func omemoState(account: String) throws(StateStoreError) -> OMEMOAccountState? {
        func rows(_ sql: String) throws(StateStoreError) -> [[String]] {
            try self.query(.readOMEMO, sql, [account]).rows.map { $0.map { $0 ?? "" } }
        }
        let device = try rows("SELECT device_id, identity_public, identity_private, next_prekey_id FROM omemo_device WHERE account = $1").first
        let keys = try rows("SELECT kind, jid, id, record FROM omemo_keys WHERE account = $1")
        let trust = try rows("SELECT jid, identity_key, trust FROM omemo_trust WHERE account = $1")
        let lists = try rows("SELECT jid, devices FROM omemo_device_lists WHERE account = $1")
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
