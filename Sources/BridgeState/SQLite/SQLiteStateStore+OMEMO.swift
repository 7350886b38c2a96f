import GRDB
import OMEMOState

/// OMEMO state (issue 41) in SQLite: written by the journal (``JournalEntry/omemo(account:_:)``),
/// read once when an OMEMO account starts and by the `omemo` commands.
extension SQLiteStateStore {
    package func omemoState(account: String) throws(StateStoreError) -> OMEMOAccountState? {
        let rows = try self.read(.readOMEMO) { db in
            let device = try Row.fetchOne(db, sql: "SELECT device_id, identity_public, identity_private, next_prekey_id FROM omemo_device WHERE account = ?", arguments: [account])
                .map { (deviceID: $0[0] as Int64, publicKey: $0[1] as String, privateKey: $0[2] as String, nextPreKeyID: $0[3] as Int64) }
            let keys = try Row.fetchAll(db, sql: "SELECT kind, jid, id, record FROM omemo_keys WHERE account = ?", arguments: [account])
                .map { (kind: $0[0] as String, jid: $0[1] as String, id: $0[2] as Int64, record: $0[3] as String) }
            let trust = try Row.fetchAll(db, sql: "SELECT jid, identity_key, trust FROM omemo_trust WHERE account = ?", arguments: [account])
                .map { (jid: $0[0] as String, identityKey: $0[1] as String, level: $0[2] as String) }
            let lists = try Row.fetchAll(db, sql: "SELECT jid, devices FROM omemo_device_lists WHERE account = ?", arguments: [account])
                .map { (jid: $0[0] as String, devices: $0[1] as String) }
            return (device, keys, trust, lists)
        }
        do {
            return try OMEMORows.state(device: rows.0, keys: rows.1, trust: rows.2, deviceLists: rows.3)
        } catch {
            throw StateStoreError(operation: .readOMEMO, location: self.location, underlying: "\(error)")
        }
    }

    /// The accounts with an OMEMO device in the state.
    package func omemoAccounts() throws(StateStoreError) -> [String] {
        try self.read(.readOMEMO) { db in try String.fetchAll(db, sql: "SELECT account FROM omemo_device ORDER BY account") }
    }

    package func saveOMEMO(_ changes: [OMEMOStateChange], account: String) throws(StateStoreError) {
        try self.write(.saveOMEMO) { db in try Self.applyOMEMO(changes, account: account, in: db) }
    }

    /// `changes` of `account`, in the journal's transaction.
    static func applyOMEMO(_ changes: [OMEMOStateChange], account: String, in db: Database) throws {
        for write in OMEMORows.writes(changes, account: account) {
            for (sql, values) in OMEMOSchema.statements(write) {
                let arguments = StatementArguments(values.map { value -> (any DatabaseValueConvertible)? in
                    switch value {
                    case .text(let text): text
                    case .integer(let integer): integer
                    }
                })
                try db.cachedStatement(sql: sql).execute(arguments: arguments)
            }
        }
    }
}
