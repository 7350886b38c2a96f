/// The OMEMO tables (``OMEMORows``), one text for SQLite's migration and PostgreSQL's schema:
/// both take these types (`BIGINT` is SQLite's INTEGER), so `state migrate` copies the
/// columns as they are.
package enum OMEMOSchema {
    package static let tables = """
        CREATE TABLE omemo_device (
          account TEXT PRIMARY KEY NOT NULL,
          device_id BIGINT NOT NULL,
          identity_public TEXT NOT NULL,
          identity_private TEXT NOT NULL,
          next_prekey_id BIGINT NOT NULL
        );
        CREATE TABLE omemo_keys (
          account TEXT NOT NULL,
          kind TEXT NOT NULL CHECK (kind IN ('prekey', 'signed', 'session', 'identity')),
          jid TEXT NOT NULL,
          id BIGINT NOT NULL,
          record TEXT NOT NULL,
          PRIMARY KEY (account, kind, jid, id)
        );
        CREATE TABLE omemo_trust (
          account TEXT NOT NULL,
          jid TEXT NOT NULL,
          identity_key TEXT NOT NULL,
          trust TEXT NOT NULL CHECK (trust IN ('blind', 'verified', 'undecided', 'distrusted')),
          PRIMARY KEY (account, jid, identity_key)
        );
        CREATE TABLE omemo_device_lists (
          account TEXT NOT NULL,
          jid TEXT NOT NULL,
          devices TEXT NOT NULL,
          PRIMARY KEY (account, jid)
        );
        """

    /// A write as statements with numbered placeholders (`?1` …) and their values, bound
    /// by both stores (``PostgresBoundStatement`` for PostgreSQL).
    package static func statements(_ write: OMEMORows.Write) -> [(sql: String, values: [OMEMOSchemaValue])] {
        switch write {
        case .clear(let account):
            return ["omemo_device", "omemo_keys", "omemo_trust", "omemo_device_lists"].map { ("DELETE FROM \($0) WHERE account = ?1", [.text(account)]) }
        default:
            return [Self.statement(write)]
        }
    }

    private static func statement(_ write: OMEMORows.Write) -> (sql: String, values: [OMEMOSchemaValue]) {
        switch write {
        case .clear:
            return ("SELECT 1", [])
        case .device(let account, let deviceID, let publicKey, let privateKey, let next):
            return (
                "INSERT INTO omemo_device (account, device_id, identity_public, identity_private, next_prekey_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                [.text(account), .integer(deviceID), .text(publicKey), .text(privateKey), .integer(next)]
            )
        case .nextPreKeyID(let account, let next):
            return ("UPDATE omemo_device SET next_prekey_id = ?2 WHERE account = ?1", [.text(account), .integer(next)])
        case .key(let account, let kind, let jid, let id, let record):
            return (
                "INSERT INTO omemo_keys (account, kind, jid, id, record) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (account, kind, jid, id) DO UPDATE SET record = excluded.record",
                [.text(account), .text(kind.rawValue), .text(jid), .integer(id), .text(record)]
            )
        case .removeKey(let account, let kind, let jid, let id):
            return ("DELETE FROM omemo_keys WHERE account = ?1 AND kind = ?2 AND jid = ?3 AND id = ?4", [.text(account), .text(kind.rawValue), .text(jid), .integer(id)])
        case .trust(let account, let jid, let key, let level):
            return (
                "INSERT INTO omemo_trust (account, jid, identity_key, trust) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (account, jid, identity_key) DO UPDATE SET trust = excluded.trust",
                [.text(account), .text(jid), .text(key), .text(level)]
            )
        case .deviceList(let account, let jid, let devices):
            return (
                "INSERT INTO omemo_device_lists (account, jid, devices) VALUES (?1, ?2, ?3) ON CONFLICT (account, jid) DO UPDATE SET devices = excluded.devices",
                [.text(account), .text(jid), .text(devices)]
            )
        }
    }
}
