import Foundation

/// The journal's side of the PostgreSQL store: a group commit as one script.
extension PostgresStateStore {
    package func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?, as operation: StateStoreError.Operation) throws(StateStoreError) {
        let (kept, fence) = self.fenced(entries)
        let script = PostgresJournalScript(kept, intakeThrough: intakeThrough, fence: fence)
        guard script.bound.isEmpty else {
            // The script, then its secrets with bound parameters, in one transaction.
            return try self.withConnection(operation) { connection throws(PostgresError) in
                do throws(PostgresError) {
                    try Self.run(script, prefix: "BEGIN;\n", on: connection)
                    try connection.run(script: "COMMIT")
                } catch {
                    if connection.isOpen { _ = try? connection.run(script: "ROLLBACK") }
                    throw error
                }
            }
        }
        guard !script.sql.isEmpty else { return }
        try self.script(operation, script.sql)
    }

    package func applyEach(
        _ entries: ArraySlice<JournalEntry>, intakeThrough: IntakeLogFile.Position?, dropped: (JournalEntry, any Error) -> Void
    ) throws(StateStoreError) {
        try self.withConnection(.enqueue) { connection throws(PostgresError) in
            try connection.run(script: "BEGIN")
            do throws(PostgresError) {
                for entry in entries {
                    let script = PostgresJournalScript([entry], intakeThrough: nil)
                    do throws(PostgresError) {
                        try Self.run(script, prefix: "SAVEPOINT entry;\n", on: connection)
                        try connection.run(script: "RELEASE SAVEPOINT entry")
                    } catch {
                        try connection.run(script: "ROLLBACK TO SAVEPOINT entry")
                        dropped(entry, error)
                    }
                }
                try connection.run(script: PostgresJournalScript([], intakeThrough: intakeThrough).sql + "COMMIT")
            } catch {
                if connection.isOpen { _ = try? connection.run(script: "ROLLBACK") }
                throw error
            }
        }
    }

    /// Runs `script` after `prefix` (the transaction or savepoint it belongs to), then its
    /// secrets as statements with bound parameters: they never appear in a statement's
    /// text, which PostgreSQL logs when a statement fails.
    private static func run(_ script: PostgresJournalScript, prefix: String, on connection: PostgresConnection) throws(PostgresError) {
        try connection.run(script: prefix + script.sql)
        for statement in script.bound { try connection.execute(statement.sql, statement.parameters) }
    }

    /// `entries` without the session state of transports whose lease is no longer good here
    /// (another instance owns them, or soon will), and the claims the commit makes on the
    /// leases of the others it acts on (several instances; none otherwise).
    private func fenced(_ entries: [JournalEntry]) -> (kept: [JournalEntry], fence: (owner: String, claims: [String: Int64])?) {
        guard let leases = self.leases else { return (entries, nil) }
        let (claims, stale) = leases.claims(for: PostgresJournalScript.actingTransports(entries))
        guard !stale.isEmpty else { return (entries, (leases.instance, claims)) }
        // Their session state, and what their messages made in the same commit.
        let kept = entries.filter { entry in
            PostgresJournalScript.actingTransports([entry]).isDisjoint(with: stale) && !(PostgresJournalScript.sourceTransport(of: entry).map(stale.contains) ?? false)
        }
        leases.logger.warning(
            "session state of transports whose lease is no longer held here, and what their messages made, left out of a commit",
            metadata: ["transports": "\(stale.sorted())", "entries": "\(entries.count - kept.count)"]
        )
        return (kept, (leases.instance, claims))
    }

    package func intakeApplied() throws(StateStoreError) -> IntakeLogFile.Position? {
        let rows = try self.query(.replayIntakeLog, #"SELECT epoch, "end" FROM intake_applied WHERE id = 0"#).rows
        guard let row = rows.first, let epoch = row[0].flatMap({ Int64($0) }), let end = row[1].flatMap({ Int($0) }) else { return nil }
        return IntakeLogFile.Position(epoch: UInt64(bitPattern: epoch), end: end)
    }

    package func lastSequence() throws(StateStoreError) -> Int64 {
        try self.integer(.readQueue, """
            SELECT GREATEST((SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM queue_sequence),
              (SELECT MAX(sequence) FROM queue), (SELECT MAX(sequence) FROM dead_letters), 0)
            """)
    }
}
