import Foundation
import Testing
import TestSupport
import XMPP

@testable import Bridge
@testable import BridgeState

/// The stream ledger (issue 21): what one process writes before each write to the socket
/// is what the next one reads, without a commit.
@Suite("stream ledger file")
struct StreamLedgerFileTests {
    static let boot = BootID(high: 1, low: 2)

    /// Writes session s1 with `ids` as stanzas 1… into a ledger at `path`, acknowledged
    /// through `acknowledged`, and closes it (as a process that ends).
    static func write(_ ids: [String?], acknowledged: UInt32, reported: UInt32 = 0, to path: String) throws {
        let ledger = try StreamLedgerFile(path: path, bootID: Self.boot)
        ledger.begin(sessionID: "s1", acknowledged: 0)
        for (offset, id) in ids.enumerated() { ledger.sent(UInt32(offset + 1), id: id) }
        ledger.acknowledged(through: acknowledged)
        ledger.reported(handled: reported)
    }

    @Test("positions written by one instance read back in another: unacknowledged ids in order, acknowledged ones, the reported count")
    func readBack() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.ledger")
        try Self.write(["a", "b", nil, "d"], acknowledged: 2, reported: 7, to: path)
        let snapshot = try StreamLedgerFile(path: path, bootID: Self.boot).snapshot()
        #expect(snapshot.current == StreamLedgerSnapshot.Session(tag: StreamLedgerFile.tag("s1"), acknowledged: 2, sent: 4, reported: 7, overflowed: false))
        #expect(snapshot.unacknowledgedIDs == ["", "d"])
        #expect(snapshot.acknowledgedIDs.sorted() == ["a", "b"])
        #expect(snapshot.resumes(sessionID: "s1"))
        #expect(!snapshot.resumes(sessionID: "s2"))
    }

    @Test("a component's chunk marked as being written but never recorded as written is in doubt, apart from what was sent and acknowledged; an account's ledger (no marks) has none")
    func writingMarksInDoubt() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("gateway.ledger")
        do {
            let ledger = try StreamLedgerFile(path: path, bootID: Self.boot)
            ledger.begin(sessionID: "component", acknowledged: 0)
            for (number, id) in [(1, "a"), (2, "b"), (3, "c")] { ledger.writing(UInt32(number), id: id) }
            for (number, id) in [(1, "a"), (2, "b"), (3, "c")] { ledger.sent(UInt32(number), id: id) }
            ledger.acknowledged(through: 2)
            for (number, id) in [(4, "d"), (5, "e")] { ledger.writing(UInt32(number), id: id) }
        }
        let snapshot = try StreamLedgerFile(path: path, bootID: Self.boot).snapshot()
        #expect(snapshot.acknowledgedIDs.sorted() == ["a", "b"])
        #expect(snapshot.unacknowledgedIDs == ["c"])
        #expect(snapshot.inDoubtIDs == ["d", "e"])

        let account = folder.path("account.ledger")
        try Self.write(["a", "b"], acknowledged: 1, to: account)
        #expect(try StreamLedgerFile(path: account, bootID: Self.boot).snapshot().inDoubtIDs.isEmpty)
    }

    @Test("a file written in another boot is not trusted: it starts empty")
    func otherBoot() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.ledger")
        try Self.write(["a"], acknowledged: 1, to: path)
        let snapshot = try StreamLedgerFile(path: path, bootID: BootID(high: 9, low: 9)).snapshot()
        #expect(snapshot == StreamLedgerSnapshot())
    }

    @Test("more unacknowledged stanzas than slots: the session is marked and not resumed")
    func overflow() throws {
        let folder = try TemporaryFolder()
        let ledger = try StreamLedgerFile(path: folder.path("a.ledger"), bootID: Self.boot, capacity: 4)
        ledger.begin(sessionID: "s1", acknowledged: 0)
        for number in UInt32(1)...4 { ledger.sent(number, id: "m\(number)") }
        #expect(ledger.snapshot().resumes(sessionID: "s1"))
        ledger.sent(5, id: "m5")
        #expect(ledger.snapshot().current?.overflowed == true)
        #expect(!ledger.snapshot().resumes(sessionID: "s1"))
        // A new session starts clean.
        ledger.begin(sessionID: "s2", acknowledged: 0)
        #expect(ledger.snapshot().resumes(sessionID: "s2"))
    }

    @Test("acknowledged ids of the session before stay known until their slots are reused; two sessions back they are not")
    func previousSession() throws {
        let folder = try TemporaryFolder()
        let ledger = try StreamLedgerFile(path: folder.path("a.ledger"), bootID: Self.boot, capacity: 8)
        ledger.begin(sessionID: "s1", acknowledged: 0)
        for number in UInt32(1)...3 { ledger.sent(number, id: "old\(number)") }
        ledger.acknowledged(through: 2)
        ledger.end()
        #expect(ledger.snapshot().current == nil)
        #expect(ledger.snapshot().acknowledgedIDs.sorted() == ["old1", "old2"])
        ledger.begin(sessionID: "s2", acknowledged: 0)
        ledger.sent(1, id: "new1")
        // Slot 1 now holds s2's stanza: old1 is gone, old2 still known, old3 never acknowledged.
        #expect(ledger.snapshot().acknowledgedIDs.sorted() == ["old2"])
        ledger.acknowledged(through: 1)
        #expect(ledger.snapshot().acknowledgedIDs.sorted() == ["new1", "old2"])
        ledger.begin(sessionID: "s3", acknowledged: 0)
        #expect(ledger.snapshot().acknowledgedIDs.sorted() == ["new1"])
    }

    @Test("a resumption keeps the numbering: stanzas sent again overwrite their own slots")
    func resumption() throws {
        let folder = try TemporaryFolder()
        let ledger = try StreamLedgerFile(path: folder.path("a.ledger"), bootID: Self.boot)
        ledger.begin(sessionID: "s1", acknowledged: 0)
        for number in UInt32(1)...3 { ledger.sent(number, id: "m\(number)") }
        // <resumed h='1'/>: 2 and 3 go again under the same numbers.
        ledger.acknowledged(through: 1)
        ledger.begin(sessionID: "s1", acknowledged: 1)
        #expect(ledger.snapshot().unacknowledgedIDs.isEmpty)
        ledger.sent(2, id: "m2")
        ledger.sent(3, id: "m3")
        #expect(ledger.snapshot().unacknowledgedIDs == ["m2", "m3"])
        #expect(ledger.snapshot().acknowledgedIDs == ["m1"])
    }

    @Test("numbers wrap modulo 2³²; an id too long for a slot is unknown, never a wrong one")
    func wrapAndLongIDs() throws {
        let folder = try TemporaryFolder()
        let ledger = try StreamLedgerFile(path: folder.path("a.ledger"), bootID: Self.boot, capacity: 8)
        ledger.begin(sessionID: "s1", acknowledged: UInt32.max - 1)
        ledger.sent(UInt32.max, id: "x")
        ledger.sent(0, id: "y")
        ledger.sent(1, id: String(repeating: "z", count: StreamLedgerFile.maximumIDBytes + 1))
        #expect(ledger.snapshot().unacknowledgedIDs == ["x", "y", ""])
        ledger.acknowledged(through: 1)
        #expect(ledger.snapshot().acknowledgedIDs.contains("x"))
        #expect(ledger.snapshot().current?.acknowledged == 1)
    }

    @Test("the stored session resumes only with its own ledger; the handled count is the larger of the two")
    func resumable() throws {
        let stored = StoredStreamSession(id: "s1", location: nil, handled: 10, acknowledged: 0, unacknowledgedIDs: [], jid: "a@b/c")
        var snapshot = StreamLedgerSnapshot()
        #expect(StreamLedgers.resumable(stored, ledger: snapshot) == nil)
        snapshot.current = .init(tag: StreamLedgerFile.tag("s1"), acknowledged: 4, sent: 6, reported: 12, overflowed: false)
        snapshot.unacknowledgedIDs = ["e", "f"]
        let resumed = try #require(StreamLedgers.resumable(stored, ledger: snapshot))
        #expect(resumed.acknowledged == 4)
        #expect(resumed.unacknowledgedIDs == ["e", "f"])
        #expect(resumed.handled == 12)
        #expect(resumed.jid == "a@b/c")
        snapshot.current?.reported = 3
        #expect(StreamLedgers.resumable(stored, ledger: snapshot)?.handled == 10)
        snapshot.current?.tag = StreamLedgerFile.tag("s0")
        #expect(StreamLedgers.resumable(stored, ledger: snapshot) == nil)
    }

    @Test("boot ids parse from the kernel's UUID form; anything else is refused")
    func bootIDs() {
        #expect(BootID(uuid: "01234567-89ab-cdef-0123-456789ABCDEF\n") == BootID(high: 0x0123_4567_89ab_cdef, low: 0x0123_4567_89ab_cdef))
        #expect(BootID(uuid: "not a uuid") == nil)
        #expect(BootID(uuid: "0123456789abcdef0123456789abcdeg") == nil)
    }

    @Test("the folder gives each account its own file, whatever its name")
    func folder() throws {
        let folder = try TemporaryFolder()
        let ledgers = try StreamLedgers(folder: folder.path("state.ledger"), bootID: Self.boot)
        let one = try ledgers.ledger(for: "../work")
        #expect(try ledgers.ledger(for: "../work") === one)
        #expect(one.path.hasPrefix(folder.path("state.ledger") + "/"))
        #expect(try ledgers.ledger(for: "home") !== one)
        #expect(throws: StreamLedgerError.self) { try StreamLedgers(folder: folder.path("missing/deeper"), bootID: Self.boot) }
    }
}
