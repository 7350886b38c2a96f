import Foundation

/// Values written into the text of a PostgreSQL script (``PostgresConnection/run(script:)``),
/// which carries a whole group commit in one round trip where parameters would need one
/// per statement. Text is quoted with its quotes doubled, which is the whole of the
/// escaping when `standard_conforming_strings` is on (the connection sets it: a backslash
/// is then an ordinary character). PostgreSQL text cannot hold a NUL: it is left out (XMPP
/// cannot carry one either), so a local line holding one never fails a commit. Times are the text
/// the SQLite store keeps (``StorageTimestamp``), so both stores hold the same values.
enum SQLLiteral {
    static func text(_ value: String?) -> String {
        guard let value else { return "NULL" }
        var quoted = value.replacingOccurrences(of: "'", with: "''")
        if quoted.utf8.contains(0) { quoted = quoted.replacingOccurrences(of: "\u{0}", with: "") }
        return "'" + quoted + "'"
    }

    static func integer(_ value: (some BinaryInteger)?) -> String {
        value.map { String($0) } ?? "NULL"
    }

    static func boolean(_ value: Bool) -> String {
        value ? "true" : "false"
    }

    static func time(_ value: Date?) -> String {
        value.map { Self.text(StorageTimestamp.text($0)) } ?? "NULL"
    }
}
