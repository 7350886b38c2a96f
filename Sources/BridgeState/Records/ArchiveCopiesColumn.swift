import LocalArchive
import TransportCore

/// How an archived message's copies are stored in the archive's `copies` column
/// (migration v13): per copy its target transport, address and id, separated by U+001F,
/// copies separated by U+001E. Neither can occur in an XMPP id or address (XML 1.0 has no
/// such characters) nor in a transport name. Written on the journal's thread for every
/// archived message, so no coder; NULL for none.
package enum ArchiveCopiesColumn {
    package static func encode(_ copies: [ArchivedMessage.Copy]) -> String? {
        guard !copies.isEmpty else { return nil }
        var text = ""
        for (index, copy) in copies.enumerated() {
            if index > 0 { text.unicodeScalars.append("\u{1E}") }
            text += copy.target.transport
            text.unicodeScalars.append("\u{1F}")
            text += copy.target.address ?? ""
            text.unicodeScalars.append("\u{1F}")
            text += copy.id
        }
        return text
    }

    /// The column's UTF-8 length for `copies` (0 for none), as ``write(_:with:)`` writes it.
    package static func byteCount(_ copies: [ArchivedMessage.Copy]) -> Int {
        var count = max(copies.count - 1, 0)
        for copy in copies { count += copy.target.transport.utf8.count + (copy.target.address?.utf8.count ?? 0) + copy.id.utf8.count + 2 }
        return count
    }

    /// Writes the column's UTF-8 for `copies` (what ``encode(_:)`` makes) straight into an
    /// ``ArchiveRow``'s storage, sized with ``byteCount(_:)``.
    package static func write(_ copies: [ArchivedMessage.Copy], with writer: inout ArchiveRow.Writer) {
        for (index, copy) in copies.enumerated() {
            if index > 0 { writer.put(0x1E as UInt8) }
            writer.put(copy.target.transport)
            writer.put(0x1F as UInt8)
            if let address = copy.target.address { writer.put(address) }
            writer.put(0x1F as UInt8)
            writer.put(copy.id)
        }
    }

    /// A malformed record is left out (never a trap).
    package static func decode(_ column: String?) -> [ArchivedMessage.Copy] {
        guard let column, !column.isEmpty else { return [] }
        return column.split(separator: "\u{1E}", omittingEmptySubsequences: true).compactMap { record in
            let fields = record.split(separator: "\u{1F}", omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            return ArchivedMessage.Copy(target: Endpoint(transport: String(fields[0]), address: fields[1].isEmpty ? nil : String(fields[1])), id: String(fields[2]))
        }
    }
}
