import Foundation

/// Values written into the text of a PostgreSQL script (``PostgresConnection/run(script:)``),
/// which carries a whole group commit in one round trip where parameters would need one
/// per statement. Text is an escape string (`E'…'`) with its backslashes and quotes
/// doubled: read the same whatever `standard_conforming_strings` says (a URL may set it),
/// in UTF-8, which the connection checks it speaks. PostgreSQL text cannot hold a NUL: it is left out (XMPP
/// cannot carry one either), so a local line holding one never fails a commit. Times are the text
/// the SQLite store keeps (``StorageTimestamp``), so both stores hold the same values.
package enum SQLLiteral {
    /// `value` as an escape string, or NULL.
    package static func text(_ value: String?) -> String {
        guard let value else { return "NULL" }
        var quoted = "E'"
        quoted.reserveCapacity(value.utf8.count + 3)
        // Most text has nothing to escape: appended whole, else byte by byte.
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\\") || $0 == 0 }) {
            quoted += value
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(value.utf8.count + 8)
            for byte in value.utf8 {
                switch byte {
                case 0: continue
                case UInt8(ascii: "'"), UInt8(ascii: "\\"): bytes += [byte, byte]
                default: bytes.append(byte)
                }
            }
            quoted += String(decoding: bytes, as: UTF8.self)
        }
        quoted += "'"
        return quoted
    }

    /// `value` in decimal, or NULL.
    package static func integer(_ value: (some BinaryInteger)?) -> String {
        value.map { String($0) } ?? "NULL"
    }

    /// `true` or `false`.
    package static func boolean(_ value: Bool) -> String {
        value ? "true" : "false"
    }

    /// `value` as the stores' time text (``StorageTimestamp``), or NULL.
    package static func time(_ value: Date?) -> String {
        value.map { Self.text(StorageTimestamp.text($0)) } ?? "NULL"
    }

    /// `column = value`, or `column IS NULL` for nil: SQLite's `IS`, in a form PostgreSQL
    /// answers from an index (`IS NOT DISTINCT FROM` it cannot).
    package static func matches(_ column: String, _ value: String?) -> String {
        value.map { "\(column) = \(Self.text($0))" } ?? "\(column) IS NULL"
    }
}
