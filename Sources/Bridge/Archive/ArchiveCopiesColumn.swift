import TransportCore

/// How an archived message's copies are stored in the archive's `copies` column
/// (migration v13): per copy its target transport, address and id, separated by U+001F,
/// copies separated by U+001E. Neither can occur in an XMPP id or address (XML 1.0 has no
/// such characters) nor in a transport name. Written on the journal's thread for every
/// archived message, so no coder; NULL for none.
enum ArchiveCopiesColumn {
    static func encode(_ copies: [ArchivedMessage.Copy]) -> String? {
        guard !copies.isEmpty else { return nil }
        var bytes: [UInt8] = []
        Self.append(copies, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the column's UTF-8 for `copies` (none for no copies) to `bytes`: the archive's
    /// INSERT binds it from there (``ArchiveRows``).
    static func append(_ copies: [ArchivedMessage.Copy], to bytes: inout [UInt8]) {
        // By index, each value borrowed in place: this runs for every archived message.
        for index in copies.indices {
            if index > 0 { bytes.append(0x1E) }
            Self.appendUTF8(copies[index].target.transport, to: &bytes)
            bytes.append(0x1F)
            if let address = copies[index].target.address { Self.appendUTF8(address, to: &bytes) }
            bytes.append(0x1F)
            Self.appendUTF8(copies[index].id, to: &bytes)
        }
    }

    /// Appends `text`'s UTF-8 to `bytes`.
    static func appendUTF8(_ text: String, to bytes: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// A malformed record is left out (never a trap).
    static func decode(_ column: String?) -> [ArchivedMessage.Copy] {
        guard let column, !column.isEmpty else { return [] }
        return column.split(separator: "\u{1E}", omittingEmptySubsequences: true).compactMap { record in
            let fields = record.split(separator: "\u{1F}", omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            return ArchivedMessage.Copy(target: Endpoint(transport: String(fields[0]), address: fields[1].isEmpty ? nil : String(fields[1])), id: String(fields[2]))
        }
    }
}
