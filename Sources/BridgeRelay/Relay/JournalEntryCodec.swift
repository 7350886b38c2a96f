import BridgeState
import Foundation
import LocalArchive
import StanzaIdentity
import TransportCore
import XMPP

/// The byte form of journal entries in the intake log (``IntakeLogFile``): compact, without
/// Foundation coders on the relay path, and read back only after a crash. Integers are
/// little-endian; a string is its UTF-8 length (u32) and bytes; an optional is a presence
/// byte; a date is its seconds since 1970 as a double's bit pattern.
///
/// Decoding never traps: a short or malformed record is ``JournalEntryCodec/Malformed``.
package enum JournalEntryCodec {
    /// A record the decoder could not read (torn or from another version).
    package struct Malformed: Error, Hashable, CustomStringConvertible {
        package var offset: Int
        package var description: String { "malformed journal record at byte \(self.offset)" }

        package init(offset: Int) {
            self.offset = offset
        }
    }

    /// The first byte of every record: bump it when the layout changes.
    package static let version: UInt8 = 1

    package static func encode(_ entries: [JournalEntry]) -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(256 * entries.count)
        writer.u8(Self.version)
        writer.u32(UInt32(entries.count))
        for entry in entries { writer.entry(entry) }
        return writer.bytes
    }

    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> [JournalEntry] {
        var reader = Reader(bytes: bytes)
        guard try reader.u8() == Self.version else { throw Malformed(offset: 0) }
        let count = Int(try reader.u32())
        guard count <= bytes.count else { throw Malformed(offset: 1) }
        var entries: [JournalEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(try reader.entry()) }
        guard reader.offset == bytes.count else { throw Malformed(offset: reader.offset) }
        return entries
    }

    private enum Tag: UInt8 {
        case enqueue = 1, complete, attempted, deadLetter, removeDeadLetter, streamSession, sourcePosition, seen, resumePoint, trimSeen
        case receipt, copyStanzaID, sourceStanzaID, page, notificationAccepted, postpone, releasePostponed, prunePaging
        /// An archived message field by field, as written before `archiveRow` (still read:
        /// a log left by an older build is replayed).
        case archive
        case archiveEdit, pruneArchive, indexArchive
        case archiveRow
        case omemo
        case login
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func u8(_ value: UInt8) { self.bytes.append(value) }
        mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { self.bytes.append(contentsOf: $0) } }
        mutating func i64(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { self.bytes.append(contentsOf: $0) } }
        mutating func int(_ value: Int) { self.i64(Int64(value)) }
        mutating func bool(_ value: Bool) { self.u8(value ? 1 : 0) }
        mutating func date(_ value: Date) { self.i64(Int64(bitPattern: value.timeIntervalSince1970.bitPattern)) }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                self.u32(UInt32(utf8.count))
                self.bytes.append(contentsOf: utf8)
            }
        }

        mutating func optional(_ value: String?) {
            guard let value else { return self.u8(0) }
            self.u8(1)
            self.string(value)
        }

        mutating func strings(_ values: [String]) {
            self.u32(UInt32(values.count))
            for value in values { self.string(value) }
        }

        mutating func endpoint(_ value: Endpoint) {
            self.string(value.transport)
            self.optional(value.address)
        }

        mutating func delivery(_ value: Delivery) {
            self.i64(value.sequence)
            self.string(value.channel)
            self.endpoint(value.target)
            self.string(value.body)
            self.string(value.originalBody)
            self.string(value.nick)
            self.optional(value.subject)
            self.string(value.type.rawValue)
            self.endpoint(value.source)
            self.string(value.sourceID)
            self.string(value.relayID)
            self.optional(MessageContentColumn.encode(value.content))
        }

        mutating func archiveRow(_ row: ArchiveRow) {
            self.i64(row.at)
            self.bool(row.bridgeMade)
            row.withBytes { bytes in
                self.u32(UInt32(bytes.count))
                self.bytes.append(contentsOf: bytes)
            }
        }

        mutating func entry(_ entry: JournalEntry) {
            switch entry {
            case .enqueue(let delivery, let enqueuedAt, let attempts):
                self.u8(Tag.enqueue.rawValue)
                self.delivery(delivery)
                self.date(enqueuedAt)
                self.int(attempts)
            case .complete(let sequence):
                self.u8(Tag.complete.rawValue)
                self.i64(sequence)
            case .attempted(let sequence, let attempts, let error):
                self.u8(Tag.attempted.rawValue)
                self.i64(sequence)
                self.int(attempts)
                self.string(error)
            case .deadLetter(let delivery, let enqueuedAt, let attempts, let reason):
                self.u8(Tag.deadLetter.rawValue)
                self.delivery(delivery)
                self.date(enqueuedAt)
                self.int(attempts)
                self.string(reason)
            case .removeDeadLetter(let sequence):
                self.u8(Tag.removeDeadLetter.rawValue)
                self.i64(sequence)
            case .streamSession(let transport, let session):
                self.u8(Tag.streamSession.rawValue)
                self.string(transport)
                guard let session else { return self.u8(0) }
                self.u8(1)
                self.string(session.id)
                self.optional(session.location)
                self.u32(session.handled)
                self.u32(session.acknowledged)
                self.strings(session.unacknowledgedIDs)
                self.optional(session.jid)
                self.strings(session.acknowledgedIDs)
            case .sourcePosition(let transport, let sequence):
                self.u8(Tag.sourcePosition.rawValue)
                self.string(transport)
                self.u32(sequence)
            case .seen(let transport, let key):
                self.u8(Tag.seen.rawValue)
                self.string(transport)
                self.string(key)
            case .resumePoint(let key, let position):
                self.u8(Tag.resumePoint.rawValue)
                self.string(key)
                self.string(position)
            case .trimSeen(let transport, let keep):
                self.u8(Tag.trimSeen.rawValue)
                self.string(transport)
                self.int(keep)
            case .receipt(let relayID, let target, let displayed, let at):
                self.u8(Tag.receipt.rawValue)
                self.string(relayID)
                self.endpoint(target)
                self.bool(displayed)
                self.date(at)
            case .copyStanzaID(let relayID, let target, let stanzaID):
                self.u8(Tag.copyStanzaID.rawValue)
                self.string(relayID)
                self.endpoint(target)
                self.string(stanzaID.rawValue)
            case .sourceStanzaID(let source, let sourceID, let stanzaID):
                self.u8(Tag.sourceStanzaID.rawValue)
                self.endpoint(source)
                self.string(sourceID)
                self.string(stanzaID.rawValue)
            case .omemo(let account, let changes):
                self.u8(Tag.omemo.rawValue)
                self.string(account)
                let bytes = OMEMOChangeColumn.encode(changes)
                self.u32(UInt32(bytes.count))
                self.bytes.append(contentsOf: bytes)
            case .login(let transport, let login):
                self.u8(Tag.login.rawValue)
                self.string(transport)
                self.string(login.userAgentID)
                self.bool(login.token != nil)
                if let token = login.token {
                    self.string(token.secret)
                    self.string(token.mechanism)
                    self.date(token.expiry)
                    self.string(token.passwordCheck)
                }
            case .page(let page):
                self.u8(Tag.page.rawValue)
                self.string(PageColumn.encode(page))
            case .notificationAccepted(let key, let id, let at):
                self.u8(Tag.notificationAccepted.rawValue)
                self.string(key)
                self.string(id)
                self.date(at)
            case .postpone(let delivery, let releaseAt, let flood):
                self.u8(Tag.postpone.rawValue)
                self.delivery(delivery)
                self.date(releaseAt)
                self.bool(flood)
            case .releasePostponed(let relayIDs):
                self.u8(Tag.releasePostponed.rawValue)
                self.strings(relayIDs)
            case .prunePaging(let pagesBefore, let notificationsBefore):
                self.u8(Tag.prunePaging.rawValue)
                self.date(pagesBefore)
                self.date(notificationsBefore)
            case .archive(let row):
                self.u8(Tag.archiveRow.rawValue)
                self.archiveRow(row)
            case .archiveEdit(let channels, let source, let nick, let sourceID, let body, let at):
                self.u8(Tag.archiveEdit.rawValue)
                self.strings(channels)
                self.endpoint(source)
                self.optional(nick)
                self.string(sourceID)
                self.optional(body)
                self.date(at)
            case .indexArchive:
                self.u8(Tag.indexArchive.rawValue)
            case .pruneArchive(let channel, let before, let limit):
                self.u8(Tag.pruneArchive.rawValue)
                self.string(channel)
                self.date(before)
                self.int(limit)
            }
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func take(_ count: Int) throws(Malformed) -> UnsafeRawBufferPointer {
            guard count >= 0, count <= self.bytes.count - self.offset else { throw Malformed(offset: self.offset) }
            defer { self.offset += count }
            return UnsafeRawBufferPointer(rebasing: self.bytes[self.offset..<(self.offset + count)])
        }

        mutating func u8() throws(Malformed) -> UInt8 { try self.take(1)[0] }
        mutating func u32() throws(Malformed) -> UInt32 { UInt32(littleEndian: try self.take(4).loadUnaligned(as: UInt32.self)) }
        mutating func i64() throws(Malformed) -> Int64 { Int64(littleEndian: try self.take(8).loadUnaligned(as: Int64.self)) }
        mutating func bool() throws(Malformed) -> Bool { try self.u8() != 0 }
        mutating func date() throws(Malformed) -> Date { Date(timeIntervalSince1970: Double(bitPattern: UInt64(bitPattern: try self.i64()))) }

        mutating func int() throws(Malformed) -> Int {
            let value = try self.i64()
            guard let int = Int(exactly: value) else { throw Malformed(offset: self.offset - 8) }
            return int
        }

        mutating func string() throws(Malformed) -> String {
            let count = Int(try self.u32())
            return String(decoding: try self.take(count), as: UTF8.self)
        }

        mutating func optional() throws(Malformed) -> String? {
            switch try self.u8() {
            case 0: return nil
            case 1: return try self.string()
            default: throw Malformed(offset: self.offset - 1)
            }
        }

        mutating func strings() throws(Malformed) -> [String] {
            let count = Int(try self.u32())
            guard count <= self.bytes.count - self.offset else { throw Malformed(offset: self.offset - 4) }
            var values: [String] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try self.string()) }
            return values
        }

        mutating func endpoint() throws(Malformed) -> Endpoint {
            Endpoint(transport: try self.string(), address: try self.optional())
        }

        mutating func delivery() throws(Malformed) -> Delivery {
            let sequence = try self.i64()
            let channel = try self.string()
            let target = try self.endpoint()
            let body = try self.string()
            let originalBody = try self.string()
            let nick = try self.string()
            let subject = try self.optional()
            let typeOffset = self.offset
            guard let type = RelayChannel.DeliveryType(rawValue: try self.string()) else { throw Malformed(offset: typeOffset) }
            return Delivery(
                sequence: sequence, channel: channel, target: target, body: body, originalBody: originalBody, nick: nick, subject: subject,
                type: type, source: try self.endpoint(), sourceID: try self.string(), relayID: try self.string(),
                content: MessageContentColumn.decode(try self.optional())
            )
        }

        mutating func archived() throws(Malformed) -> ArchivedMessage {
            var message = ArchivedMessage(
                at: try self.date(), channel: try self.string(), source: try self.endpoint(), sender: try self.string(), nick: try self.string(),
                sourceID: try self.string(), body: try self.string(), subject: try self.optional(), content: MessageContentColumn.decode(try self.optional())
            )
            let count = Int(try self.u32())
            guard count <= self.bytes.count - self.offset else { throw Malformed(offset: self.offset - 4) }
            for _ in 0..<count { message.copies.append(ArchivedMessage.Copy(target: try self.endpoint(), id: try self.string())) }
            message.bridgeMade = try self.bool()
            return message
        }

        mutating func entry() throws(Malformed) -> JournalEntry {
            let tagOffset = self.offset
            guard let tag = Tag(rawValue: try self.u8()) else { throw Malformed(offset: tagOffset) }
            switch tag {
            case .enqueue:
                return .enqueue(try self.delivery(), enqueuedAt: try self.date(), attempts: try self.int())
            case .complete:
                return .complete(sequence: try self.i64())
            case .attempted:
                return .attempted(sequence: try self.i64(), attempts: try self.int(), error: try self.string())
            case .deadLetter:
                return .deadLetter(try self.delivery(), enqueuedAt: try self.date(), attempts: try self.int(), reason: try self.string())
            case .removeDeadLetter:
                return .removeDeadLetter(sequence: try self.i64())
            case .streamSession:
                let transport = try self.string()
                guard try self.bool() else { return .streamSession(transport: transport, nil) }
                var session = StoredStreamSession(
                    id: try self.string(), location: try self.optional(), handled: try self.u32(), acknowledged: try self.u32(),
                    unacknowledgedIDs: try self.strings(), jid: try self.optional()
                )
                session.acknowledgedIDs = try self.strings()
                return .streamSession(transport: transport, session)
            case .sourcePosition:
                return .sourcePosition(transport: try self.string(), sequence: try self.u32())
            case .seen:
                return .seen(transport: try self.string(), deduplicationKey: try self.string())
            case .resumePoint:
                return .resumePoint(key: try self.string(), position: try self.string())
            case .trimSeen:
                return .trimSeen(transport: try self.string(), keep: try self.int())
            case .receipt:
                return .receipt(relayID: try self.string(), target: try self.endpoint(), displayed: try self.bool(), at: try self.date())
            case .copyStanzaID:
                return .copyStanzaID(relayID: try self.string(), target: try self.endpoint(), stanzaID: StanzaID(try self.string()))
            case .sourceStanzaID:
                return .sourceStanzaID(source: try self.endpoint(), sourceID: try self.string(), stanzaID: StanzaID(try self.string()))
            case .omemo:
                let account = try self.string()
                let offset = self.offset
                let count = Int(try self.u32())
                guard let changes = OMEMOChangeColumn.decode(Array(try self.take(count))) else { throw Malformed(offset: offset) }
                return .omemo(account: account, changes)
            case .login:
                let transport = try self.string()
                var login = StoredLogin(userAgentID: try self.string())
                if try self.bool() {
                    login.token = StoredLogin.Token(
                        secret: try self.string(), mechanism: try self.string(), expiry: try self.date(), passwordCheck: try self.string()
                    )
                }
                return .login(transport: transport, login)
            case .page:
                let offset = self.offset
                guard let page = PageColumn.decode(try self.string()) else { throw Malformed(offset: offset) }
                return .page(page)
            case .notificationAccepted:
                return .notificationAccepted(key: try self.string(), id: try self.string(), at: try self.date())
            case .postpone:
                return .postpone(try self.delivery(), releaseAt: try self.date(), flood: try self.bool())
            case .releasePostponed:
                return .releasePostponed(relayIDs: try self.strings())
            case .prunePaging:
                return .prunePaging(pagesBefore: try self.date(), notificationsBefore: try self.date())
            case .archive:
                return .archive(try self.archived())
            case .archiveRow:
                let at = try self.i64()
                let bridgeMade = try self.bool()
                let count = Int(try self.u32())
                let rowOffset = self.offset
                guard let row = ArchiveRow(at: at, bridgeMade: bridgeMade, bytes: try self.take(count)) else { throw Malformed(offset: rowOffset) }
                return .archive(row)
            case .archiveEdit:
                return .archiveEdit(channels: try self.strings(), source: try self.endpoint(), nick: try self.optional(), sourceID: try self.string(), body: try self.optional(), at: try self.date())
            case .indexArchive:
                return .indexArchive
            case .pruneArchive:
                return .pruneArchive(channel: try self.string(), before: try self.date(), limit: try self.int())
            }
        }
    }
}
