import Foundation
import LocalArchive
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// The intake log's byte form of journal entries (issue 21): every kind reads back as
/// written, and no malformed record traps.
@Suite("journal entry codec")
struct JournalEntryCodecTests {
    static let target = Endpoint(transport: "home", address: "bob@b.example")
    static let local = Endpoint(transport: "ops")

    static var everyKind: [JournalEntry] {
        var rich = WALCheckpointerTests.delivery(1)
        rich.sequence = 41
        rich.subject = "Betreff ✓"
        rich.content = MessageContent(url: "https://u.test/a.png", replyTo: "r", reactions: ["👍"], reuploadMaxBytes: 10)
        var plain = WALCheckpointerTests.delivery(2)
        plain.sequence = 42
        plain.target = Self.local
        plain.type = .headline
        var session = StoredStreamSession(
            id: "sm-1", location: nil, handled: 7, acknowledged: 3, unacknowledgedIDs: ["a", ""], jid: "bridge@b.example/r"
        )
        session.acknowledgedIDs = ["z"]
        let date = Date(timeIntervalSince1970: 1_764_000_000.123_456)
        return [
            .enqueue(rich, enqueuedAt: date, attempts: 0), .enqueue(plain, enqueuedAt: date, attempts: 3), .complete(sequence: 41),
            .attempted(sequence: 42, attempts: 4, error: "timeout"), .deadLetter(plain, enqueuedAt: date, attempts: 5, reason: "gone"),
            .removeDeadLetter(sequence: 42), .streamSession(transport: "home", session), .streamSession(transport: "work", nil),
            .sourcePosition(transport: "work", sequence: .max), .seen(transport: "work", deduplicationKey: "u-1"), .resumePoint(key: "work room:r@m", position: "c-9"),
            .trimSeen(transport: "work", keep: 100_000), .receipt(relayID: "r1", target: Self.target, displayed: true, at: date),
            .copyStanzaID(relayID: "r1", target: Self.target, stanzaID: "s-1"), .sourceStanzaID(source: Self.local, sourceID: "i", stanzaID: "s-2"),
            .page(Page(source: Self.local, id: "web-1", channel: "oncall", priority: 5, text: "disk", createdAt: Date(timeIntervalSince1970: 1_764_000_000), recipients: [Self.target], copies: ["r1": Self.target], tierSince: Date(timeIntervalSince1970: 1_764_000_000), lastSent: Date(timeIntervalSince1970: 1_764_000_000))),
            .notificationAccepted(key: "oncall\u{1E}k", id: "web-1", at: date), .postpone(rich, releaseAt: date, flood: true),
            .releasePostponed(relayIDs: ["r1", "r2"]),
            .archive(
                ArchivedMessage(
                    at: date, channel: "ops", source: Self.target, sender: "bob@b.example/phone", nick: "Bob", sourceID: "m-1", body: "disk full",
                    subject: "s", content: MessageContent(url: "https://f.example/a.png"), copies: [.init(target: Self.local, id: "r1"), .init(target: Self.target, id: "r2")],
                    bridgeMade: true
                )
            ),
            .archiveEdit(channels: ["ops"], source: Self.target, nick: nil, sourceID: "m-1", body: "disk fine", at: date),
            .archiveEdit(channels: ["ops", "dev"], source: Self.local, nick: "bob", sourceID: "m-2", body: nil, at: date),
            .pruneArchive(channel: "ops", before: date, limit: 1000), .indexArchive,
            .login(transport: "home", StoredLogin(userAgentID: "ua")),
            .login(transport: "work", StoredLogin(userAgentID: "ua-2", token: .init(secret: "s", mechanism: "HT-SHA-256-NONE", expiry: date, passwordCheck: "c"))),
        ]
    }

    static func decode(_ bytes: [UInt8]) throws -> [JournalEntry] {
        try bytes.withUnsafeBytes { buffer in try JournalEntryCodec.decode(buffer) }
    }

    @Test func everyKindOfEntryReadsBackAsWritten() throws {
        let entries = Self.everyKind
        let decoded = try Self.decode(JournalEntryCodec.encode(entries))
        // JournalEntry is not Equatable: compare through the encoding and a description.
        #expect(JournalEntryCodec.encode(decoded) == JournalEntryCodec.encode(entries))
        #expect(decoded.map { "\($0)" } == entries.map { "\($0)" })
        #expect(try Self.decode(JournalEntryCodec.encode([])).isEmpty)
    }

    @Test func everyTruncationIsMalformedNotACrash() {
        let bytes = JournalEntryCodec.encode(Self.everyKind)
        for length in 0..<bytes.count {
            #expect(throws: JournalEntryCodec.Malformed.self) { _ = try Self.decode(Array(bytes[..<length])) }
        }
        #expect(throws: JournalEntryCodec.Malformed.self) { _ = try Self.decode(bytes + [0]) }
    }

    @Test func unknownVersionTagOrDeliveryTypeIsMalformed() throws {
        var bytes = JournalEntryCodec.encode([.complete(sequence: 1)])
        bytes[0] = 99
        #expect(throws: JournalEntryCodec.Malformed.self) { _ = try Self.decode(bytes) }
        bytes = JournalEntryCodec.encode([.complete(sequence: 1)])
        bytes[5] = 200  // the entry's tag
        #expect(throws: JournalEntryCodec.Malformed.self) { _ = try Self.decode(bytes) }
        let encoded = JournalEntryCodec.encode([.enqueue(WALCheckpointerTests.delivery(1), enqueuedAt: Date(), attempts: 0)])
        let chat = Array("chat".utf8)
        let at = try #require((0...(encoded.count - chat.count)).first { Array(encoded[$0..<($0 + chat.count)]) == chat })
        var wrongType = encoded
        wrongType[at] = UInt8(ascii: "x")
        #expect(throws: JournalEntryCodec.Malformed.self) { _ = try Self.decode(wrongType) }
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(state: 21)
        for _ in 0..<2_000 {
            var bytes = JournalEntryCodec.encode(Self.everyKind)
            for _ in 0..<(1 + Int(random.next() % 4)) { bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next()) }
            _ = try? Self.decode(bytes)
        }
    }

    @Test("an archive entry in the layout older builds wrote (field by field) is still read: a log left by one is replayed")
    func olderArchiveLayoutIsRead() throws {
        var bytes: [UInt8] = [JournalEntryCodec.version]
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { bytes.append(contentsOf: $0) } }
        func string(_ text: String) {
            u32(text.utf8.count)
            bytes.append(contentsOf: text.utf8)
        }
        func optional(_ text: String?) {
            bytes.append(text == nil ? 0 : 1)
            if let text { string(text) }
        }
        u32(1)
        bytes.append(19)  // the older `archive` tag
        withUnsafeBytes(of: Date(timeIntervalSince1970: 1_764_000_000.5).timeIntervalSince1970.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        string("ops")
        string("home")
        optional("bob@b.example")
        string("bob@b.example/phone")
        string("Bob")
        string("m-1")
        string("disk ✓")
        optional(nil)
        optional(nil)
        u32(1)
        string("ops")
        optional(nil)
        string("r1")
        bytes.append(1)
        let decoded = try Self.decode(bytes)
        guard decoded.count == 1, case .archive(let row) = decoded[0] else {
            Issue.record("expected one archive entry, got \(decoded)")
            return
        }
        #expect(row.at == 1_764_000_000_500 && row.bridgeMade)
        #expect(row.texts == ["ops", "home", "bob@b.example", "bob@b.example/phone", "Bob", "m-1", "disk ✓", nil, nil, "ops\u{1F}\u{1F}r1"])
    }

    @Test("an archive row whose column lengths do not add up to its bytes is malformed, never read past its end")
    func archiveRowLengthsAreChecked() throws {
        let row = ArchiveRow(ArchivedMessage(at: Date(), channel: "ops", source: Self.local, sender: "s", nick: "n", sourceID: "i", body: "text"))
        let bytes = JournalEntryCodec.encode([.archive(row)])
        #expect(try Self.decode(bytes).count == 1)
        // After the version, the count, the tag, `at` and the flag: the byte count, then the
        // ten lengths (the first is the channel's).
        let lengths = 1 + 4 + 1 + 8 + 1 + 4
        for (length, why) in [(Int32(4), "one too many"), (Int32(2), "one too few"), (Int32(-2), "below NULL"), (Int32.max, "far past the end")] {
            var changed = bytes
            withUnsafeBytes(of: length.littleEndian) { changed.replaceSubrange(lengths..<(lengths + 4), with: $0) }
            #expect(throws: JournalEntryCodec.Malformed.self, "\(why)") { _ = try Self.decode(changed) }
        }
    }
}
