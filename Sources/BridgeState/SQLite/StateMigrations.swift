import GRDB

/// The versioned schema of the state database. Migrations are applied in order and recorded
/// in `grdb_migrations`, so opening a database again runs only the ones it lacks. A released
/// migration is never edited: a schema change is a new `v2-…` migration.
package enum StateMigrations {
    /// Every migration this build knows, in order.
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-create-routes-relays-queue", migrate: createTables)
        migrator.registerMigration("v2-roster-mirror", migrate: createRosterMirrorSnapshots)
        migrator.registerMigration("v3-attempts-dead-letters", migrate: addAttemptsAndDeadLetters)
        migrator.registerMigration("v4-stream-sessions", migrate: createStreamSessions)
        migrator.registerMigration("v5-source-checkpoints", migrate: createSourceCheckpoints)
        migrator.registerMigration("v6-route-rooms", migrate: addRouteRooms)
        migrator.registerMigration("v7-receipts", migrate: addReceipts)
        migrator.registerMigration("v8-rich-content", migrate: addRichContent)
        migrator.registerMigration("v9-lean-relay-indexes", migrate: dropRelayPathIndexes)
        migrator.registerMigration("v10-intake-log-position", migrate: createIntakeApplied)
        migrator.registerMigration("v11-gateway-registrations", migrate: createGatewayRegistrations)
        migrator.registerMigration("v12-paging", migrate: createPaging)
        migrator.registerMigration("v13-archive", migrate: createArchive)
        migrator.registerMigration("v14-lean-archive-index", migrate: leanArchiveIndex)
        migrator.registerMigration("v15-fts-without-sizes", migrate: textIndexWithoutSizes)
        migrator.registerMigration("v16-copy-stanza-id", migrate: renameCopyStanzaID)
        migrator.registerMigration("v17-omemo", migrate: createOMEMO)
        migrator.registerMigration("v18-logins", migrate: createLogins)
        return migrator
    }

    /// v1: runtime route changes, the relay id map and the durable outbound queue.
    private static func createTables(_ db: Database) throws {
        // One row per (channel, endpoint): the latest runtime change for that member.
        try db.create(table: RouteRecord.databaseTableName) { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("channel", .text).notNull()
            t.column("transport", .text).notNull()
            t.column("address", .text)
            t.column("action", .text).notNull()
                .check(sql: "action IN ('add', 'remove')")
            t.column("direction", .text)
                .check(sql: "direction IN ('in', 'out', 'inout')")
            t.column("changed_at", .datetime).notNull()
            t.check(sql: "(action = 'add') = (direction IS NOT NULL)")
        }
        // NULL addresses (local transports) must collide too, hence the expression.
        try db.execute(sql: """
            CREATE UNIQUE INDEX routes_member ON routes(channel, transport, IFNULL(address, ''))
            """)

        try db.create(table: RelayRecord.databaseTableName) { t in
            t.primaryKey("relay_id", .text)
            t.column("channel", .text).notNull()
            t.column("source_transport", .text).notNull()
            t.column("source_address", .text)
            t.column("source_id", .text).notNull()
            t.column("target_transport", .text).notNull()
            t.column("target_address", .text)
            t.column("created_at", .datetime).notNull().indexed()
        }
        try db.create(
            index: "relays_source", on: RelayRecord.databaseTableName,
            columns: ["source_transport", "source_address", "source_id"]
        )

        try db.create(table: QueuedDeliveryRecord.databaseTableName) { t in
            // AUTOINCREMENT: a sequence is never reused, even after the queue empties.
            t.autoIncrementedPrimaryKey("sequence")
            t.column("channel", .text).notNull()
            t.column("target_transport", .text).notNull()
            t.column("target_address", .text)
            t.column("body", .text).notNull()
            t.column("original_body", .text).notNull()
            t.column("nick", .text).notNull()
            t.column("subject", .text)
            t.column("type", .text).notNull()
                .check(sql: "type IN ('chat', 'normal', 'headline')")
            t.column("source_transport", .text).notNull()
            t.column("source_address", .text)
            t.column("source_id", .text).notNull()
            t.column("relay_id", .text).notNull()
            t.column("enqueued_at", .datetime).notNull()
        }
        try db.create(
            index: "queue_transport_sequence", on: QueuedDeliveryRecord.databaseTableName,
            columns: ["target_transport", "sequence"]
        )
    }

    /// v2: one roster mirror snapshot per mirror direction (issue 5, "Roster mirroring").
    private static func createRosterMirrorSnapshots(_ db: Database) throws {
        try db.create(table: RosterMirrorSnapshotRecord.databaseTableName) { t in
            t.primaryKey("mirror_id", .text)
            t.column("snapshot_json", .text).notNull()
        }
    }

    /// v3 (issue 8, "Poison messages and dead letters"): each queued delivery counts its
    /// attempts and keeps its last error; deliveries that exhausted their attempts or met a
    /// permanent error move to `dead_letters` with the reason, until retried or dropped.
    private static func addAttemptsAndDeadLetters(_ db: Database) throws {
        try db.alter(table: QueuedDeliveryRecord.databaseTableName) { t in
            t.add(column: "attempts", .integer).notNull().defaults(to: 0)
            t.add(column: "last_error", .text)
        }
        try db.create(table: DeadLetterRecord.databaseTableName) { t in
            // The sequence the delivery had in the queue; a retry queues it anew.
            t.primaryKey("sequence", .integer)
            t.column("channel", .text).notNull()
            t.column("target_transport", .text).notNull()
            t.column("target_address", .text)
            t.column("body", .text).notNull()
            t.column("original_body", .text).notNull()
            t.column("nick", .text).notNull()
            t.column("subject", .text)
            t.column("type", .text).notNull()
            t.column("source_transport", .text).notNull()
            t.column("source_address", .text)
            t.column("source_id", .text).notNull()
            t.column("relay_id", .text).notNull()
            t.column("enqueued_at", .datetime).notNull()
            t.column("attempts", .integer).notNull()
            t.column("reason", .text).notNull()
            t.column("dead_at", .datetime).notNull()
        }
        try db.create(index: "dead_letters_transport", on: DeadLetterRecord.databaseTableName, columns: ["target_transport", "sequence"])
    }

    /// v4 (issue 9): each account's resumable stream management session (XEP-0198), so a
    /// restarted bridge resumes it: the server then resends only what was not committed,
    /// and says which of our deliveries it had taken.
    private static func createStreamSessions(_ db: Database) throws {
        try db.create(table: StreamSessionRecord.databaseTableName) { t in
            t.primaryKey("transport", .text)
            t.column("session_id", .text).notNull()
            t.column("location", .text)
            t.column("jid", .text)
            t.column("handled", .integer).notNull()
            t.column("acknowledged", .integer).notNull()
            t.column("unacknowledged_ids", .text).notNull()
        }
    }

    /// v5: each transport's resume point in its source's history (an XMPP account's archive
    /// cursor, XEP-0313) and the unique ids of the messages it relayed lately (XEP-0359
    /// `stanza-id`), so a message handed over twice is relayed once.
    private static func createSourceCheckpoints(_ db: Database) throws {
        try db.create(table: "source_checkpoints") { t in
            t.primaryKey("transport", .text)
            t.column("checkpoint", .text).notNull()
        }
        try db.create(table: "seen_unique_ids") { t in
            t.autoIncrementedPrimaryKey("position")
            t.column("transport", .text).notNull()
            t.column("unique_id", .text).notNull()
            t.uniqueKey(["transport", "unique_id"])
        }
        // Acknowledged deliveries leave the queue by relay id (stream management).
        try db.create(index: "queue_by_relay_id", on: "queue", columns: ["target_transport", "relay_id"])
    }

    /// v6: a route added at runtime may be a room (XEP-0045): its nick and password source,
    /// as JSON (never the password).
    private static func addRouteRooms(_ db: Database) throws {
        try db.alter(table: RouteRecord.databaseTableName) { t in
            t.add(column: "room", .text)
        }
    }

    /// v7 (issue 11): when the recipient's client received each relayed copy: a receipt
    /// (XEP-0184) and a displayed marker (XEP-0333), for `GET /messages/{id}`.
    private static func addReceipts(_ db: Database) throws {
        try db.alter(table: RelayRecord.databaseTableName) { t in
            t.add(column: "received_at", .datetime)
            t.add(column: "displayed_at", .datetime)
        }
    }

    /// v8 (issue 12): what a queued or dead delivery carries besides text (a file, a
    /// correction, a reply, reactions, a retraction, a receipt passed back), as JSON; and the
    /// stanza-ids rooms gave a relayed message and its copies (XEP-0359), which replies,
    /// reactions and retractions in rooms refer to (the indexes hold only rows that have
    /// one), and the sender's nick, for who may correct or retract a room message.
    private static func addRichContent(_ db: Database) throws {
        for table in [QueuedDeliveryRecord.databaseTableName, DeadLetterRecord.databaseTableName] {
            try db.alter(table: table) { t in
                t.add(column: "content", .text)
            }
        }
        try db.alter(table: RelayRecord.databaseTableName) { t in
            t.add(column: "source_stanza_id", .text)
            t.add(column: "target_stanza_id", .text)
            // Who wrote it (a room occupant's nick): only they may correct or retract it.
            t.add(column: "source_nick", .text)
        }
        try db.create(
            index: "relays_source_stanza", on: RelayRecord.databaseTableName, columns: ["source_transport", "source_address", "source_stanza_id"],
            condition: Column("source_stanza_id") != nil
        )
        try db.create(
            index: "relays_target_stanza", on: RelayRecord.databaseTableName, columns: ["target_stanza_id", "target_transport", "target_address"],
            condition: Column("target_stanza_id") != nil
        )
    }

    /// v9 (issue 21): indexes the relay path paid for on every commit but nothing on it
    /// reads. Each costs a page (a WAL frame) per insert and per delete: 9.6 frames per
    /// relayed message became 6.1. The queue is small and read whole at start; lookups by
    /// relay id (stream management acknowledgements) are rare and take one scan for all
    /// their ids; relays are pruned by rowid, which grows with `created_at`.
    private static func dropRelayPathIndexes(_ db: Database) throws {
        try db.execute(sql: """
            DROP INDEX IF EXISTS queue_transport_sequence;
            DROP INDEX IF EXISTS queue_by_relay_id;
            DROP INDEX IF EXISTS relays_on_created_at;
            """)
    }

    /// v10 (issue 21): how far the intake log (``IntakeLogFile``) is applied, written in the
    /// same transaction as what it applies, so replaying the log after a crash applies
    /// exactly what the database lacks. One row.
    private static func createIntakeApplied(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE intake_applied (
              id INTEGER PRIMARY KEY CHECK (id = 0),
              epoch INTEGER NOT NULL,
              "end" INTEGER NOT NULL
            )
            """)
    }

    /// v11: gateway users who linked an account in band (XEP-0077), with its password.
    private static func createGatewayRegistrations(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE gateway_registrations (
              gateway TEXT NOT NULL,
              user TEXT NOT NULL,
              address TEXT NOT NULL,
              password TEXT NOT NULL,
              registered_at DATETIME NOT NULL,
              PRIMARY KEY (gateway, user)
            )
            """)
    }

    /// v12 (issue 24): the alerts of paging channels (their state as JSON: recipients,
    /// copies, tier, acknowledgement, escalations), and the monitoring notifications
    /// accepted lately, for de-duplication across an Alertmanager HA pair, and deliveries
    /// held back by a flood limit or quiet hours until their release.
    private static func createPaging(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE pages (
              source_transport TEXT NOT NULL,
              source_id TEXT NOT NULL,
              channel TEXT NOT NULL,
              created_at DATETIME NOT NULL,
              state TEXT NOT NULL,
              PRIMARY KEY (source_transport, source_id)
            );
            CREATE INDEX pages_on_created_at ON pages (created_at);
            CREATE TABLE accepted_notifications (
              key TEXT PRIMARY KEY,
              message_id TEXT NOT NULL,
              accepted_at DATETIME NOT NULL
            );
            CREATE TABLE postponed_deliveries (
              relay_id TEXT PRIMARY KEY,
              release_at DATETIME NOT NULL,
              flood INTEGER NOT NULL,
              delivery TEXT NOT NULL
            );
            """)
    }

    /// The local archive (issue 25): one row per message and channel, times in
    /// milliseconds since 1970 (UTC), and its full-text index (SQLite FTS5, external
    /// content: the text is stored once). The relay's commits insert rows only; the index
    /// takes them in batches (``SQLiteStateStore/indexArchive(in:)``, through `archive_indexed`),
    /// a twentieth of the cost of indexing each commit's few rows. Ids are never reused
    /// (AUTOINCREMENT: a pruned newest row must not hand its id to a row the index would
    /// then never take, nor move a reader's cursor). Triggers keep the index
    /// in step when an indexed row is corrected, retracted or pruned. The one index on the
    /// table grows at its end (time order; an index on the random source ids cost the
    /// relay a fifth more CPU per message); here it also holds the source id, which v14
    /// takes out.
    private static func createArchive(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE archive (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              at INTEGER NOT NULL,
              channel TEXT NOT NULL,
              source_transport TEXT NOT NULL,
              source_address TEXT,
              sender TEXT NOT NULL,
              nick TEXT NOT NULL,
              source_id TEXT NOT NULL,
              body TEXT NOT NULL,
              subject TEXT,
              content TEXT,
              copies TEXT,
              bridge_made INTEGER NOT NULL DEFAULT 0,
              edited_at INTEGER,
              retracted_at INTEGER
            );
            CREATE INDEX archive_on_channel_at ON archive (channel, at, source_id);
            CREATE VIRTUAL TABLE archive_text USING fts5(
              body, content = 'archive', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
            );
            CREATE TABLE archive_indexed (through INTEGER NOT NULL);
            INSERT INTO archive_indexed (through) VALUES (0);
            CREATE TRIGGER archive_text_delete AFTER DELETE ON archive
            WHEN old.id <= (SELECT through FROM archive_indexed) BEGIN
              INSERT INTO archive_text (archive_text, rowid, body) VALUES ('delete', old.id, old.body);
            END;
            CREATE TRIGGER archive_text_update AFTER UPDATE OF body ON archive
            WHEN old.id <= (SELECT through FROM archive_indexed) BEGIN
              INSERT INTO archive_text (archive_text, rowid, body) VALUES ('delete', old.id, old.body);
              INSERT INTO archive_text (rowid, body) VALUES (new.id, new.body);
            END;
            """)
    }

    /// v14 (issue 25): the archive's one index without the source id. It is written with
    /// every archived message: without any index the archive added about a quarter less to
    /// the relay's CPU (two bridges measured at once), and its entries shrink from about 61
    /// bytes to about 22 with `(channel, at)`. A correction now looks for its message among
    /// the channel's newest archived messages (``SQLiteStateStore/editCandidates``), reading their
    /// rows, a bounded cost per correction.
    private static func leanArchiveIndex(_ db: Database) throws {
        try db.execute(sql: """
            DROP INDEX archive_on_channel_at;
            CREATE INDEX archive_by_channel_time ON archive (channel, at);
            """)
    }

    /// v15 (issue 25): the full-text index without its table of per-message token counts
    /// (FTS5 `columnsize=0`), merging its segments eight at a time (`automerge`, default 4).
    /// Indexing a message wrote a row there too: without it, a batch costs about half as
    /// much (0.65 µs a message instead of 1.2, system SQLite). bm25 then counts the tokens of
    /// the messages it ranks (at most ``SQLiteStateStore/rankedWindow``) as it goes: a ranked
    /// search over 300,000 messages took 13 ms instead of 11. Merging eight segments at
    /// once rewrites each indexed message fewer times: 1.0 µs a message instead of 1.3 over
    /// 200,000 messages indexed in batches of 10,000, searches as fast. The index is rebuilt
    /// here from what the old one held; the triggers name the table, not its options, and
    /// stay.
    private static func textIndexWithoutSizes(_ db: Database) throws {
        try db.execute(sql: """
            DROP TABLE archive_text;
            CREATE VIRTUAL TABLE archive_text USING fts5(
              body, content = 'archive', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
            );
            INSERT INTO archive_text (archive_text, rank) VALUES ('automerge', 8);
            INSERT INTO archive_text (rowid, body) SELECT id, body FROM archive WHERE id <= (SELECT through FROM archive_indexed) ORDER BY id;
            """)
    }

    /// v16 (issue 40): a relayed copy's stanza-id column is named for what it holds, the
    /// stanza-id the target room gave our copy (``RelayRecord/copyStanzaID``), as the
    /// source's is `source_stanza_id`. Its partial index is renamed with it.
    private static func renameCopyStanzaID(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE relays RENAME COLUMN target_stanza_id TO copy_stanza_id;
            DROP INDEX relays_target_stanza;
            CREATE INDEX relays_copy_stanza ON relays (copy_stanza_id, target_transport, target_address) WHERE copy_stanza_id IS NOT NULL;
            """)
    }

    /// v17 (issue 41): each OMEMO account's device, keys, trust and followed device lists
    /// (``OMEMORows``). Binary values are base64 text.
    private static func createOMEMO(_ db: Database) throws {
        try db.execute(sql: OMEMOSchema.tables)
    }

    /// v18 (issue 43): each account's login state (``StoredLogin``): its SASL2 user agent id
    /// and its FAST token, a credential kept like the passwords (the file is mode 0600).
    private static func createLogins(_ db: Database) throws {
        try db.execute(sql: StoredLogin.table)
    }
}
