import Foundation
import TransportCore

/// One archived message (issue 25) as the archive's INSERT binds it, built once on the
/// relay path: its time, whether the bridge made it, and its ten text columns' UTF-8 back to
/// back in one allocation this row owns. The intake log copies the bytes as they are
/// (``JournalEntryCodec``) and the journal binds them in place (``ArchiveRows``), so a
/// message's text is not copied, counted or released field by field on its way to SQLite.
///
/// Layout: ten lengths (`Int32`, -1 for NULL), then each column's bytes in order, at
/// `columns` order: channel, source transport, source address, sender, nick, source id,
/// body, subject, content (``MessageContentColumn``), copies (``ArchiveCopiesColumn``).
/// The lengths are in native byte order, as the intake log's own fields (a log is read on
/// the machine that wrote it). Never changed after it is made (so it is `Sendable`); freed
/// with the last reference.
final class ArchiveRow: @unchecked Sendable, CustomStringConvertible {
    /// Milliseconds since 1970 (the `at` column).
    let at: Int64
    let bridgeMade: Bool
    /// The lengths, then the text.
    let bytes: UnsafeRawBufferPointer

    /// Text columns in a row.
    static var textColumns: Int { 10 }
    static var headerBytes: Int { Self.textColumns * MemoryLayout<Int32>.size }

    convenience init(_ message: ArchivedMessage) {
        self.init(
            at: message.at, channel: message.channel, source: message.source, sender: message.sender, nick: message.nick, sourceID: message.sourceID,
            body: message.body, subject: message.subject, content: message.content, copies: message.copies, bridgeMade: message.bridgeMade
        )
    }

    init(
        at: Date, channel: String, source: Endpoint, sender: String, nick: String, sourceID: String, body: String, subject: String?,
        content: MessageContent, copies: [ArchivedMessage.Copy], bridgeMade: Bool
    ) {
        self.at = StateStore.milliseconds(at)
        self.bridgeMade = bridgeMade
        let contentColumn = content.isEmpty ? nil : MessageContentColumn.encode(content)
        // Two passes over the same columns, the sizes then the bytes: no array of them is
        // made (this runs on the event loop for every archived message).
        var size = Self.headerBytes + ArchiveCopiesColumn.byteCount(copies)
        size += channel.utf8.count + source.transport.utf8.count + (source.address?.utf8.count ?? 0) + sender.utf8.count + nick.utf8.count
        size += sourceID.utf8.count + body.utf8.count + (subject?.utf8.count ?? 0) + (contentColumn?.utf8.count ?? 0)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: MemoryLayout<Int32>.alignment)
        var column = 0
        var offset = Self.headerBytes
        func put(_ text: String?) {
            defer { column += 1 }
            guard let text else { return storage.storeBytes(of: -1, toByteOffset: column * 4, as: Int32.self) }
            let count = text.utf8.count
            storage.storeBytes(of: Int32(truncatingIfNeeded: count), toByteOffset: column * 4, as: Int32.self)
            _ = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + count)]).copyBytes(from: text.utf8)
            offset += count
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
        storage.storeBytes(of: Int32(truncatingIfNeeded: copies.isEmpty ? -1 : size - offset), toByteOffset: column * 4, as: Int32.self)
        ArchiveCopiesColumn.write(copies, into: UnsafeMutableRawBufferPointer(rebasing: storage[offset...]))
        self.bytes = UnsafeRawBufferPointer(storage)
    }

    /// A row read back from the intake log: `bytes` are its lengths and text as
    /// ``bytes`` holds them; nil unless the lengths add up to exactly `bytes`.
    init?(at: Int64, bridgeMade: Bool, bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.headerBytes else { return nil }
        var total = Self.headerBytes
        for column in 0..<Self.textColumns {
            let count = Int(bytes.loadUnaligned(fromByteOffset: column * 4, as: Int32.self))
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

    /// Calls `body` with each text column in order: its UTF-8 (nil for NULL), valid while
    /// this row lives.
    func forEachText(_ body: (UnsafeRawBufferPointer?) -> Void) {
        var offset = Self.headerBytes
        for column in 0..<Self.textColumns {
            let count = Int(self.bytes.load(fromByteOffset: column * 4, as: Int32.self))
            guard count >= 0 else {
                body(nil)
                continue
            }
            body(UnsafeRawBufferPointer(rebasing: self.bytes[offset..<(offset + count)]))
            offset += count
        }
    }

    /// The columns as text (tests and logs).
    var texts: [String?] {
        var texts: [String?] = []
        self.forEachText { texts.append($0.map { String(decoding: $0, as: UTF8.self) }) }
        return texts
    }

    var description: String {
        "ArchiveRow(at: \(self.at), bridgeMade: \(self.bridgeMade), \(self.texts.map { $0.map { "\"\($0)\"" } ?? "nil" }.joined(separator: ", ")))"
    }
}
