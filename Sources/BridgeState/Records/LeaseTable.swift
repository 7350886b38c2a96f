/// The lease rows in PostgreSQL (issue 26): who holds each resource, with which epoch,
/// until when, and each instance's heartbeat. Times are the database's own, so instances
/// whose clocks disagree still agree on every lease: an expiry is set from the statement's
/// time (`statement_timestamp()`, never earlier than the request), and checked against the
/// transaction's start (`now()`, which errs towards the lease still running). A row is
/// never deleted: its epoch only grows, so a grant is never handed out twice with the same
/// epoch, even to the same instance after a release. A live lease is never granted again,
/// not even to its own owner's name: a restarted process waits for its old lease to run
/// out (or for its release), so a paused old process and the new one never both work.
///
/// Blocking (``PostgresConnection``): run on the journal's thread or a thread of its own.
package struct LeaseTable {
    package let connection: PostgresConnection

    /// Creates the tables if they are not there, in one transaction under an advisory lock:
    /// instances starting at the same moment on an empty database would otherwise collide
    /// (`CREATE TABLE IF NOT EXISTS` is not safe against itself).
    package func createSchema() throws(PostgresError) {
        try self.connection.execute("BEGIN")
        do {
            try self.connection.execute("SELECT pg_advisory_xact_lock(\(Self.schemaLock))")
            try self.connection.execute("""
                CREATE TABLE IF NOT EXISTS leases (
                  resource text PRIMARY KEY,
                  owner text NOT NULL,
                  epoch bigint NOT NULL,
                  expires_at timestamptz NOT NULL
                )
                """)
            // When the owner last took or renewed it: a former owner's stream was lost no
            // earlier (``InheritedDeliveries``).
            try self.connection.execute("ALTER TABLE leases ADD COLUMN IF NOT EXISTS renewed_at timestamptz")
            try self.connection.execute("CREATE TABLE IF NOT EXISTS instances (name text PRIMARY KEY, heartbeat_at timestamptz NOT NULL)")
            // A commit's fencing check (``PostgresJournalScript``): every claim must still be
            // its owner's, or the whole transaction ends with SQLSTATE XB001.
            try self.connection.execute("""
                CREATE OR REPLACE FUNCTION bridge_fence(owner_name text, resources text[], epochs bigint[]) RETURNS void
                LANGUAGE plpgsql AS $$
                BEGIN
                  FOR i IN 1 .. coalesce(array_length(resources, 1), 0) LOOP
                    PERFORM 1 FROM leases WHERE resource = resources[i] AND owner = owner_name AND epoch = epochs[i] AND expires_at >= now() FOR SHARE;
                    IF NOT FOUND THEN
                      RAISE EXCEPTION 'lease of % (epoch %) is no longer held by %', resources[i], epochs[i], owner_name USING ERRCODE = 'XB001';
                    END IF;
                  END LOOP;
                END $$
                """)
            try self.connection.execute("COMMIT")
        } catch {
            _ = try? self.connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The advisory lock key schema changes take (any fixed number, the same everywhere).
    package static var schemaLock: Int64 { 0x7862_7269_6467_6526 }

    /// Takes `resource` for `owner` for `ttl` if it is free, released or expired, with a new
    /// epoch; nil while a lease runs (anyone's).
    package func acquire(_ resource: String, owner: String, ttl: Duration) throws(PostgresError) -> Int64? {
        try self.acquire([resource], owner: owner, ttl: ttl)[resource]?.epoch
    }

    /// A lease taken: its epoch, and how long ago the former owner last took or renewed
    /// it (nil: nobody held it before).
    package struct Taken: Equatable, Sendable {
        package var epoch: Int64
        package var formerOwnerSilence: Duration?

        package init(epoch: Int64, formerOwnerSilence: Duration? = nil) {
            self.epoch = epoch
            self.formerOwnerSilence = formerOwnerSilence
        }
    }

    /// Takes each of `resources` that is free, released or expired, at most `atMost` of
    /// them (in the order given), in one statement; those taken. Running leases are
    /// looked at, never locked, so asking often for many costs their owners nothing.
    package func acquire(_ resources: [String], owner: String, ttl: Duration, atMost: Int = .max) throws(PostgresError) -> [String: Taken] {
        guard !resources.isEmpty, atMost > 0 else { return [:] }
        let rows = try self.connection.execute(
            """
            WITH free AS (
              SELECT r FROM unnest($1::text[]) WITH ORDINALITY AS u(r, n)
              WHERE NOT EXISTS (SELECT 1 FROM leases l WHERE l.resource = u.r AND l.expires_at >= now())
              ORDER BY n LIMIT $4::bigint
            ),
            prior AS (SELECT resource, renewed_at FROM leases WHERE resource IN (SELECT r FROM free))
            INSERT INTO leases (resource, owner, epoch, expires_at, renewed_at)
              SELECT r, $2, 1, statement_timestamp() + $3::interval, statement_timestamp() FROM free
            ON CONFLICT (resource) DO UPDATE SET owner = EXCLUDED.owner, epoch = leases.epoch + 1, expires_at = EXCLUDED.expires_at,
              renewed_at = EXCLUDED.renewed_at
              WHERE leases.expires_at < now()
            RETURNING resource, epoch,
              (SELECT extract(epoch FROM statement_timestamp() - p.renewed_at) FROM prior p WHERE p.resource = leases.resource)
            """,
            [PostgresArray.text(resources), owner, Self.interval(ttl), String(min(atMost, resources.count))]
        )
        var taken: [String: Taken] = [:]
        for row in rows where row.count == 3 {
            guard let resource = row[0], let epoch = row[1].flatMap({ Int64($0) }) else { continue }
            let silence = row[2].flatMap { Double($0) }.flatMap { $0.isFinite && abs($0) < 1e12 ? $0 : nil }.map { Duration.milliseconds(Int64(($0 * 1000).rounded(.up))) }
            taken[resource] = Taken(epoch: epoch, formerOwnerSilence: silence)
        }
        return taken
    }

    /// Extends `owner`'s lease on `resource` with `epoch` by `ttl`; false when it is no
    /// longer that (another owner or epoch, or expired: the owner must stop).
    package func renew(_ resource: String, owner: String, epoch: Int64, ttl: Duration) throws(PostgresError) -> Bool {
        try self.renew([resource: epoch], owner: owner, ttl: ttl).contains(resource)
    }

    /// Extends each of `owner`'s leases in `claims` (resource and epoch) by `ttl`, in one
    /// statement; those renewed (the others must stop).
    package func renew(_ claims: [String: Int64], owner: String, ttl: Duration) throws(PostgresError) -> Set<String> {
        guard !claims.isEmpty else { return [] }
        let ordered = claims.sorted { $0.key < $1.key }
        let rows = try self.connection.execute(
            """
            UPDATE leases l SET expires_at = statement_timestamp() + $4::interval, renewed_at = statement_timestamp()
            FROM unnest($2::text[], $3::bigint[]) AS c(resource, epoch)
            WHERE l.resource = c.resource AND l.epoch = c.epoch AND l.owner = $1 AND l.expires_at >= now()
            RETURNING l.resource
            """,
            [owner, PostgresArray.text(ordered.map(\.key)), PostgresArray.text(ordered.map { String($0.value) }), Self.interval(ttl)]
        )
        return Set(rows.compactMap { $0.first ?? nil })
    }

    /// Moves the queue's sequence `size` on under a lock, so that instances sharing the
    /// queue each number their deliveries from a block of their own; the block's first
    /// sequence, past every one handed out or stored before.
    package func reserveSequences(_ size: Int64) throws(PostgresError) -> Int64 {
        try self.connection.execute("BEGIN")
        do throws(PostgresError) {
            try self.connection.execute("SELECT pg_advisory_xact_lock(\(Self.sequenceLock))")
            let rows = try self.connection.execute(
                """
                SELECT setval('queue_sequence', GREATEST(
                  (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM queue_sequence),
                  (SELECT COALESCE(MAX(sequence), 0) FROM queue), (SELECT COALESCE(MAX(sequence), 0) FROM dead_letters)) + $1::bigint) - $1::bigint + 1
                """,
                [String(size)]
            )
            try self.connection.execute("COMMIT")
            guard let first = rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else {
                throw PostgresError(operation: .execute, message: "no sequence block returned", sqlState: nil)
            }
            return first
        } catch {
            _ = try? self.connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The advisory lock key sequence blocks are reserved under.
    package static var sequenceLock: Int64 { 0x7862_7365_7162_6C6B }

    /// Gives the lease back: it expires now, keeping its epoch.
    package func release(_ resource: String, owner: String, epoch: Int64) throws(PostgresError) {
        try self.release([resource: epoch], owner: owner)
    }

    /// Gives back each of `owner`'s leases in `claims` (resource and epoch), in one statement.
    package func release(_ claims: [String: Int64], owner: String) throws(PostgresError) {
        guard !claims.isEmpty else { return }
        let ordered = claims.sorted { $0.key < $1.key }
        try self.connection.execute(
            """
            UPDATE leases l SET expires_at = '-infinity' FROM unnest($2::text[], $3::bigint[]) AS c(resource, epoch)
            WHERE l.resource = c.resource AND l.epoch = c.epoch AND l.owner = $1
            """,
            [owner, PostgresArray.text(ordered.map(\.key)), PostgresArray.text(ordered.map { String($0.value) })]
        )
    }

    /// Whether `owner` holds `resource` with `epoch` now: the fencing check of a commit,
    /// made inside its transaction, where the row stays locked (`FOR SHARE`) until the
    /// transaction ends, so no other instance can take the lease before the commit is done.
    /// Outside a transaction it only tells about that moment.
    package func holds(_ resource: String, owner: String, epoch: Int64) throws(PostgresError) -> Bool {
        try !self.connection.execute(
            "SELECT 1 FROM leases WHERE resource = $1 AND owner = $2 AND epoch = $3 AND expires_at >= now() FOR SHARE",
            [resource, owner, String(epoch)]
        ).isEmpty
    }

    /// Records that `instance` is alive now.
    package func heartbeat(_ instance: String) throws(PostgresError) {
        try self.connection.execute(
            "INSERT INTO instances (name, heartbeat_at) VALUES ($1, now()) ON CONFLICT (name) DO UPDATE SET heartbeat_at = now()",
            [instance]
        )
    }

    /// The instances with a heartbeat in the last `window`.
    package func liveInstances(within window: Duration) throws(PostgresError) -> [String] {
        try self.connection.execute(
            "SELECT name FROM instances WHERE heartbeat_at >= now() - $1::interval ORDER BY name", [Self.interval(window)]
        ).compactMap { $0.first ?? nil }
    }

    /// Every instance that ever sent a heartbeat, with its last one (ISO 8601) and whether it
    /// is within `window`, by name.
    package func instances(within window: Duration) throws(PostgresError) -> [(name: String, heartbeat: String, alive: Bool)] {
        try self.connection.execute(
            """
            SELECT name, to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
              heartbeat_at >= now() - $1::interval FROM instances ORDER BY name
            """,
            [Self.interval(window)]
        ).compactMap { row in
            guard row.count == 3, let name = row[0], let heartbeat = row[1] else { return nil }
            return (name, heartbeat, row[2] == "t")
        }
    }

    /// Each resource's owner while its lease runs.
    package func owners() throws(PostgresError) -> [String: String] {
        var owners: [String: String] = [:]
        for row in try self.connection.execute("SELECT resource, owner FROM leases WHERE expires_at >= now()") {
            if row.count == 2, let resource = row[0], let owner = row[1] { owners[resource] = owner }
        }
        return owners
    }

    /// `duration` as a PostgreSQL interval (microseconds).
    package static func interval(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1_000_000 + attoseconds / 1_000_000_000_000) microseconds"
    }

    package init(connection: PostgresConnection) {
        self.connection = connection
    }
}
