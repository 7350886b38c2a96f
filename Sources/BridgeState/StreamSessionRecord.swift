import Foundation
import GRDB

/// A row of `stream_sessions`: one account's resumable stream management session
/// (XEP-0198 §5), written by the ``Journal`` in its group commits.
///
/// `handled` (our inbound `h`) moves forward with the commits that hold the messages; a
/// session snapshot never moves it back for the same session.
package struct StreamSessionRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "stream_sessions"

    package var transport: String
    package var sessionID: String
    package var location: String?
    package var jid: String?
    package var handled: Int64
    package var acknowledged: Int64
    /// JSON array of stanza ids, in order.
    package var unacknowledgedIDs: String

    package enum CodingKeys: String, CodingKey {
        case transport
        case sessionID = "session_id"
        case location
        case jid
        case handled
        case acknowledged
        case unacknowledgedIDs = "unacknowledged_ids"
    }

    /// Writes (or, for nil, deletes) the account's session.
    package static func save(_ session: StoredStreamSession?, transport: String, in db: Database) throws {
        guard let session else {
            try db.cachedStatement(sql: "DELETE FROM stream_sessions WHERE transport = ?").execute(arguments: [transport])
            return
        }
        let ids = String(decoding: try JSONEncoder().encode(session.unacknowledgedIDs), as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO stream_sessions (transport, session_id, location, jid, handled, acknowledged, unacknowledged_ids)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(transport) DO UPDATE SET
              handled = CASE WHEN stream_sessions.session_id = excluded.session_id AND stream_sessions.handled > excluded.handled
                THEN stream_sessions.handled ELSE excluded.handled END,
              session_id = excluded.session_id, location = excluded.location, jid = excluded.jid,
              acknowledged = excluded.acknowledged, unacknowledged_ids = excluded.unacknowledged_ids
            """).execute(arguments: [
                transport, session.id, session.location, session.jid, Int64(session.handled), Int64(session.acknowledged), ids,
            ])
    }

    /// The stored session, if it reads back sound.
    package var session: StoredStreamSession? {
        guard let ids = try? JSONDecoder().decode([String].self, from: Data(self.unacknowledgedIDs.utf8)),
            let handled = UInt32(exactly: self.handled), let acknowledged = UInt32(exactly: self.acknowledged)
        else { return nil }
        return StoredStreamSession(
            id: self.sessionID, location: self.location, handled: handled, acknowledged: acknowledged, unacknowledgedIDs: ids, jid: self.jid
        )
    }

    package init(transport: String, sessionID: String, location: String? = nil, jid: String? = nil, handled: Int64, acknowledged: Int64, unacknowledgedIDs: String) {
        self.transport = transport
        self.sessionID = sessionID
        self.location = location
        self.jid = jid
        self.handled = handled
        self.acknowledged = acknowledged
        self.unacknowledgedIDs = unacknowledgedIDs
    }
}
