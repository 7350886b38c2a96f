import Foundation
import GRDB
import IntegrationSupport
import TestServers
import TestSupport
import Testing

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// The schema is written twice, once per dialect (`StateMigrations` for SQLite,
    /// `PostgresSchema` for PostgreSQL): this proves the two describe the same tables, with
    /// the same columns, the same NOT NULLs and the same kinds of values, after every
    /// migration. What only one dialect has is named here, with why.
    @Suite("one schema in two dialects", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct SchemaParityTests {
        /// A column as both dialects can say it: its table, name, NOT NULL, and kind.
        struct Column: Hashable, CustomStringConvertible {
            var table: String
            var name: String
            var notNull: Bool
            var kind: String
            var description: String { "\(table).\(name) \(kind)\(notNull ? " NOT NULL" : "")" }
        }

        /// Tables only one dialect has: SQLite's migration list (GRDB's) and full-text index
        /// (FTS5, with its shadow tables); PostgreSQL's migration list, the leases and
        /// instances of several instances (issue 26), and its sequence blocks.
        /// SQLite's `archive_indexed` is how far its FTS5 index has read the archive.
        static let sqliteOnly: Set<String> = [
            "grdb_migrations", "archive_text", "archive_text_data", "archive_text_idx", "archive_text_docsize", "archive_text_config", "archive_text_content",
            "archive_indexed",
        ]
        static let postgresOnly: Set<String> = ["schema_migrations", "leases", "instances"]
        /// Columns only PostgreSQL has: the archive's full-text vector (SQLite's is the FTS5
        /// table), and an explicit insertion order where SQLite reads its rowid.
        static let postgresOnlyColumns: Set<String> = ["archive.words", "relays.position", "postponed_deliveries.position"]

        /// The kind of value a declared type holds, in either dialect.
        static func kind(_ declared: String) -> String {
            let type = declared.lowercased()
            if type.contains("int") || type == "bigserial" || type == "serial" { return "integer" }
            if type.contains("char") || type.contains("text") || type == "uuid" || type == "jsonb" || type == "json" { return "text" }
            if type.contains("blob") || type == "bytea" { return "bytes" }
            if type.contains("real") || type.contains("double") || type.contains("float") || type.contains("numeric") { return "real" }
            // SQLite keeps a truth as 0 or 1 (no boolean type); PostgreSQL as a boolean.
            if type.contains("bool") { return "integer" }
            // Timestamps are text in both (`StorageTimestamp`); GRDB declares SQLite's DATETIME.
            if type.contains("date") || type.contains("time") { return "text" }
            return type.isEmpty ? "any" : type
        }

        static func sqliteColumns() throws -> Set<Column> {
            let folder = try TemporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder.url) }
            let path = folder.path("parity.sqlite")
            _ = try SQLiteStateStore(path: path)
            let database = try DatabaseQueue(path: path)
            let rows = try database.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT m.name AS t, p.name AS c, p."notnull" AS nn, p.type AS ty, p.pk AS pk
                        FROM sqlite_master m JOIN pragma_table_info(m.name) p
                        WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
                        """
                )
            }
            return Set(
                rows.compactMap { row -> Column? in
                    let table: String = row["t"]
                    guard !Self.sqliteOnly.contains(table) else { return nil }
                    // A PRIMARY KEY column is NOT NULL in PostgreSQL whatever it says; in SQLite
                    // only an INTEGER one is (a rowid): the key counts as NOT NULL on both.
                    let notNull = (row["nn"] as Int) == 1 || (row["pk"] as Int) > 0
                    return Column(table: table, name: row["c"], notNull: notNull, kind: Self.kind(row["ty"]))
                }
            )
        }

        static func postgresColumns() async throws -> Set<Column> {
            let database = try await SharedPostgres.freshDatabase()
            _ = try PostgresStateStore(url: database.url, password: database.password)
            let rows = try PostgresConnection(url: database.url, password: database.password).query(
                "SELECT table_name, column_name, is_nullable, data_type FROM information_schema.columns WHERE table_schema = current_schema()"
            )
            return Set(
                rows.rows.compactMap { row -> Column? in
                    guard let table = row[0], let name = row[1], !Self.postgresOnly.contains(table), !Self.postgresOnlyColumns.contains("\(table).\(name)") else {
                        return nil
                    }
                    return Column(table: table, name: name, notNull: row[2] == "NO", kind: Self.kind(row[3] ?? ""))
                }
            )
        }

        @Test("after all migrations, SQLite and PostgreSQL have the same tables and columns, NOT NULLs and kinds of value")
        func sameSchema() async throws {
            let sqlite = try Self.sqliteColumns()
            let postgres = try await Self.postgresColumns()
            #expect(!sqlite.isEmpty && !postgres.isEmpty)
            let onlySQLite = sqlite.subtracting(postgres).sorted { $0.description < $1.description }
            let onlyPostgres = postgres.subtracting(sqlite).sorted { $0.description < $1.description }
            #expect(onlySQLite.isEmpty && onlyPostgres.isEmpty, "only in SQLite: \(onlySQLite)\nonly in PostgreSQL: \(onlyPostgres)")
        }
    }
}
