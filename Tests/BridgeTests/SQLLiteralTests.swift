import Foundation
import Testing

@testable import Bridge
@testable import BridgeState

/// Values written into a PostgreSQL script (issue 26): escape strings with backslashes and
/// quotes doubled, NUL left out, NULL for nil, the stores' time text.
@Suite("SQLLiteral")
struct SQLLiteralTests {
    @Test("text: plain as it is, quotes and backslashes doubled, NUL left out, non-ASCII kept, nil is NULL")
    func text() {
        #expect(SQLLiteral.text("disk full ✓") == "E'disk full ✓'")
        #expect(SQLLiteral.text("O'Brien \\ '; DROP TABLE queue; --") == "E'O''Brien \\\\ ''; DROP TABLE queue; --'")
        #expect(SQLLiteral.text("a\u{0}b'") == "E'ab'''")
        #expect(SQLLiteral.text("") == "E''")
        #expect(SQLLiteral.text(nil) == "NULL")
    }

    @Test("numbers, booleans, times and the IS of SQLite as = or IS NULL")
    func others() {
        #expect(SQLLiteral.integer(Int64(-42)) == "-42")
        #expect(SQLLiteral.integer(Int?.none) == "NULL")
        #expect(SQLLiteral.boolean(true) == "true" && SQLLiteral.boolean(false) == "false")
        #expect(SQLLiteral.time(Date(timeIntervalSince1970: 1_800_000_000.25)) == "E'2027-01-15 08:00:00.250'")
        #expect(StorageTimestamp.date("2027-01-15 08:00:00.250") == Date(timeIntervalSince1970: 1_800_000_000.25))
        #expect(StorageTimestamp.date("2027-01-15T08:00:00") == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(StorageTimestamp.date("2027-13-15 08:00:00") == nil && StorageTimestamp.date("soon") == nil)
        #expect(SQLLiteral.matches("target_address", "bob@b.example") == "target_address = E'bob@b.example'")
        #expect(SQLLiteral.matches("target_address", nil) == "target_address IS NULL")
    }

    @Test("both stores know the same migrations, under the same names, in the same order")
    func sameMigrations() {
        #expect(PostgresSchema.migrations.map(\.identifier) == StateMigrations.migrator.migrations)
    }
}
