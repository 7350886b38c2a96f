import Testing
import TestSupport

@testable import XMPP

/// The session's table of rooms (XEP-0045), without a session: what a delivery to a room
/// meets, and what a lost connection does to each room.
@Suite("RoomTable")
struct RoomTableTests {
    typealias Table = RoomTable<ManualClock.Instant>
    static let room = RoomInboundTests.room

    static func table() throws -> Table {
        var table = Table()
        table.entries[try JID(room)] = try RoomInboundTests.joinedEntry()
        return table
    }

    @Test("a delivery to a joined room goes and its id is remembered; to a contact, a removed room, a room not joined or one under a lookup it waits or goes as to a contact")
    func checkSend() throws {
        var table = try Self.table()
        let room = try JID(Self.room)
        #expect(table.checkSend(to: try JID("\(Self.room)/alice"), id: "r1") == .joined, "an occupant's JID names the room")
        #expect(table.entries[room]?.machine.reflected("r1") == false, "remembered as ours, not yet reflected")
        #expect(table.checkSend(to: try JID("bob@example.test"), id: "r2") == .notARoom)
        table.entries[room]?.checkingLeftUnreflected = true
        guard case .notJoined = table.checkSend(to: room, id: "r3") else {
            Issue.record("a room whose archive is being asked took a delivery")
            return
        }
        table.removed.insert(try JID("old@muc.example.test"))
        #expect(table.checkSend(to: try JID("old@muc.example.test"), id: "r4") == .removed)
    }

    @Test("a lost connection: a lookup of what we left a room with that never ran goes to the next stream's doubt (with an archive check), the room's gate opens; without an archive check it stays with the room")
    func connectionLost() throws {
        let room = try JID(Self.room)
        var left = InDoubtMessages()
        left.batches = [InDoubtMessages.Batch(messages: [InDoubtMessagesTests.message("g1", type: "groupchat")], waiter: OneShotWaiter<Void>(), room: room)]
        for checksArchive in [true, false] {
            var table = try Self.table()
            table.online = true
            table.entries[room]?.leftUnreflected = left
            table.entries[room]?.checkingLeftUnreflected = true
            let doubt = table.connectionLost(resumable: true, checksArchive: checksArchive)
            #expect(!table.online)
            #expect(table.entries[room]?.checkingLeftUnreflected == false, "the gate opens")
            #expect(doubt.batches.count == (checksArchive ? 1 : 0))
            #expect(table.entries[room]?.leftUnreflected.isEmpty == checksArchive)
            #expect(table.entries[room]?.machine.isJoined == true, "a resumable stream keeps the room")
        }
        var table = try Self.table()
        _ = table.connectionLost(resumable: false, checksArchive: true)
        #expect(table.entries[room]?.machine.isJoined == false, "a stream that cannot be resumed leaves the room")
    }
}
