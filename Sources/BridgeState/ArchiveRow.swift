import Foundation
import LocalArchive
import TransportCore

/// One archived message (issue 25) as the archive's INSERT binds it, built once on the
/// relay path: its time, whether the bridge made it, and its ten text columns' UTF-8 back to
/// back in one allocation this row owns. The intake log copies the bytes as they are
/// (``JournalEntryCodec``) and the journal binds them in place (``ArchiveInsertStatement``),
/// so a message's text is not copied, counted or released field by field on its way to
/// SQLite.
///
/// Layout: ten lengths (`Int32`, little-endian like every field of the intake log; -1 for
/// NULL), then each column's bytes in this order: channel, source transport, source
/// address, sender, nick, source id, body, subject, content (``MessageContentColumn``),
/// copies (``ArchiveCopiesColumn``). Never changed after it is made (so it is `Sendable`);
/// freed with the last reference, so its bytes are reached only through closures.
package final class ArchiveRow: @unchecked Sendable, CustomStringConvertible {
    /// Milliseconds since 1970 (the `at` column).
    package let at: Int64
    package let bridgeMade: Bool
    /// The lengths, then the text; never empty (the lengths are always there).
    private let bytes: UnsafeRawBufferPointer

    /// Text columns in a row.
    package static var textColumns: Int { 10 }
    package static var headerBytes: Int { Self.textColumns * MemoryLayout<Int32>.size }

    /// Writes text at increasing offsets of a buffer made to its measure; running past its
    /// end is a programming error (the sizes are counted from the same values), never input.
    package struct Writer {
        package let buffer: UnsafeMutableRawBufferPointer
        package var offset: Int

        package mutating func put(_ text: String) {
            let count = text.utf8.count
            precondition(count <= self.buffer.count - self.offset, "archive row sized short")
            UnsafeMutableRawBufferPointer(rebasing: self.buffer[self.offset..<(self.offset + count)]).copyBytes(from: text.utf8)
            self.offset += count
        }

        package mutating func put(_ byte: UInt8) {
            self.buffer[self.offset] = byte
            self.offset += 1
        }

        package init(buffer: UnsafeMutableRawBufferPointer, offset: Int) {
            self.buffer = buffer
            self.offset = offset
        }
    }

    package convenience init(_ message: ArchivedMessage) {
        self.init(
            at: message.at, channel: message.channel, source: message.source, sender: message.sender, nick: message.nick, sourceID: message.sourceID,
            body: message.body, subject: message.subject, content: message.content, copies: message.copies, bridgeMade: message.bridgeMade
        )
    }

    /// A text with a NUL character (only a local transport can carry one) keeps the rest:
    /// the XMPP copies drop it too (XML has no such character), and SQLite text is read
    /// back up to its first NUL.
    package convenience init(
        at: Date, channel: String, source: Endpoint, sender: String, nick: String, sourceID: String, body: String, subject: String?,
        content: MessageContent, copies: [ArchivedMessage.Copy], bridgeMade: Bool
    ) {
        let nul =
            Self.hasNUL(channel) || Self.hasNUL(source.transport) || Self.hasNUL(source.address) || Self.hasNUL(sender) || Self.hasNUL(nick)
            || Self.hasNUL(sourceID) || Self.hasNUL(body) || Self.hasNUL(subject)
        guard nul else {
            self.init(
                at: at, channel: channel, source: source, sender: sender, nick: nick, sourceID: sourceID, body: body, subject: subject, content: content,
                copies: copies, bridgeMade: bridgeMade, checked: ()
            )
            return
        }
        func clean(_ text: String) -> String { text.replacingOccurrences(of: "\u{0}", with: "") }
        self.init(
            at: at, channel: clean(channel), source: Endpoint(transport: clean(source.transport), address: source.address.map(clean)), sender: clean(sender),
            nick: clean(nick), sourceID: clean(sourceID), body: clean(body), subject: subject.map(clean), content: content, copies: copies,
            bridgeMade: bridgeMade, checked: ()
        )
    }

    private static func hasNUL(_ text: String?) -> Bool {
        guard let text, !text.isEmpty else { return false }
        return text.utf8.withContiguousStorageIfAvailable { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false } ?? text.utf8.contains(0)
    }

    /// The texts have no NUL.
    private init(
        at: Date, channel: String, source: Endpoint, sender: String, nick: String, sourceID: String, body: String, subject: String?,
        content: MessageContent, copies: [ArchivedMessage.Copy], bridgeMade: Bool, checked: Void
    ) {
        self.at = SQLiteStateStore.milliseconds(at)
        self.bridgeMade = bridgeMade
        let contentColumn = MessageContentColumn.encode(content.withoutWantsReceipt)
        // Two passes over the same columns, the sizes then the bytes: no array of them is
        // made (this runs on the event loop for every archived message).
        let copiesBytes = ArchiveCopiesColumn.byteCount(copies)
        var size = Self.headerBytes + copiesBytes
        size += channel.utf8.count + source.transport.utf8.count + (source.address?.utf8.count ?? 0) + sender.utf8.count + nick.utf8.count
        size += sourceID.utf8.count + body.utf8.count + (subject?.utf8.count ?? 0) + (contentColumn?.utf8.count ?? 0)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: MemoryLayout<Int32>.alignment)
        var writer = Writer(buffer: storage, offset: Self.headerBytes)
        var column = 0
        func length(_ count: Int?) {
            storage.storeBytes(of: Int32(truncatingIfNeeded: count ?? -1).littleEndian, toByteOffset: column * 4, as: Int32.self)
            column += 1
        }
        func put(_ text: String?) {
            length(text?.utf8.count)
            if let text { writer.put(text) }
        }
        put(channel)
        put(source.transport)
        put(source.address)
        put(sender)
        put(nick)
        put(sourceID)
        put(body)
        put(subject)
        put(contentColumn)
        length(copies.isEmpty ? nil : copiesBytes)
        ArchiveCopiesColumn.write(copies, with: &writer)
        precondition(writer.offset == size && column == Self.textColumns, "archive row sized \(size), written \(writer.offset)")
        self.bytes = UnsafeRawBufferPointer(storage)
    }

    /// A row read back from the intake log: `bytes` are its lengths and text as
    /// ``withBytes(_:)`` gives them; nil unless the lengths add up to exactly `bytes`.
    package init?(at: Int64, bridgeMade: Bool, bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.headerBytes else { return nil }
        var total = Self.headerBytes
        for column in 0..<Self.textColumns {
            let count = Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: column * 4, as: Int32.self)))
            guard count >= -1 else { return nil }
            total += max(count, 0)
            guard total <= bytes.count else { return nil }
        }
        guard total == bytes.count else { return nil }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: MemoryLayout<Int32>.alignment)
        storage.copyMemory(from: bytes)
        self.at = at
        self.bridgeMade = bridgeMade
        self.bytes = UnsafeRawBufferPointer(storage)
    }

    deinit {
        self.bytes.deallocate()
    }

    /// Calls `body` with the row's lengths and text (the intake log's copy).
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) { try body(self.bytes) }
    }

    /// Calls `body` with each text column in order: its UTF-8, never without an address
    /// (an empty text points into the row), or nil for NULL. The pointers stay valid as long
    /// as this row lives, after `body` returns too (the INSERT binds them all, then steps).
    package func forEachText(_ body: (UnsafeRawBufferPointer?) -> Void) {
        var offset = Self.headerBytes
        for column in 0..<Self.textColumns {
            let count = Int(Int32(littleEndian: self.bytes.loadUnaligned(fromByteOffset: column * 4, as: Int32.self)))
            guard count >= 0 else {
                body(nil)
                continue
            }
            body(UnsafeRawBufferPointer(rebasing: self.bytes[offset..<(offset + count)]))
            offset += count
        }
    }

    /// The source transport column (the second text column).
    package var sourceTransport: String? { self.texts[1] }

    /// The columns as text (tests and logs).
    package var texts: [String?] {
        var texts: [String?] = []
        self.forEachText { texts.append($0.map { String(decoding: $0, as: UTF8.self) }) }
        return texts
    }

    package var description: String {
        "ArchiveRow(at: \(self.at), bridgeMade: \(self.bridgeMade), \(self.texts.map { $0.map { "\"\($0)\"" } ?? "nil" }.joined(separator: ", ")))"
    }
}
