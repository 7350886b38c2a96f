import Foundation
import Testing
import TestSupport

@testable import XMPP

/// The session's inbound dispatch (issue 40), without a session: which part reads each
/// stanza, and what comes back for the session to carry out.
@Suite("InboundDispatch")
struct InboundDispatchTests {
    typealias Dispatch = InboundDispatch<ManualClock.Instant>
    static let own = ArchiveCatchUpStateMachineTests.own
    static let room = RoomInboundTests.room

    struct Parts {
        var inDoubt = InDoubtState<ManualClock.Instant>()
        var rooms = RoomTable<ManualClock.Instant>()
        var catchUp = AccountCatchUp(machine: nil, holdLimit: 10)
        var machine = SessionStateMachine<ManualClock.Instant>(
            ownJID: InboundDispatchTests.own, configuration: .init(softwareName: "dispatch-test", softwareVersion: "1.0", capabilitiesNode: "urn:test")
        )

        mutating func read(_ xml: String) throws -> Dispatch.Outcome {
            Dispatch.read(
                try RoomStateMachineTests.stanza(xml), inDoubt: &self.inDoubt, rooms: &self.rooms, catchUp: &self.catchUp, machine: &self.machine,
                now: { RoomInboundTests.t0 }
            )
        }
    }

    @Test("a message from a room we sit in is the room's; a groupchat message from any other room is ignored")
    func rooms() throws {
        var parts = Parts()
        parts.rooms.entries[try JID(Self.room)] = try RoomInboundTests.joinedEntry()
        let inRoom = try parts.read("<message from='\(Self.room)/alice' type='groupchat' id='a1'><body>hi</body></message>")
        guard case .room(let room, let actions) = inRoom, case .emit(let message) = actions.first else {
            Issue.record("not read by the room: \(inRoom)")
            return
        }
        #expect(room.description == Self.room)
        #expect(message.body == "hi")
        let stranger = try parts.read("<message from='other@muc.example.test/bob' type='groupchat' id='b1'><body>hi</body></message>")
        guard case .session(let ignored) = stranger, case .ignored(let reason) = ignored.first, ignored.count == 1 else {
            Issue.record("a stranger room's message was not ignored: \(stranger)")
            return
        }
        #expect(reason.contains("no room we are in"))
    }

    @Test("a chat message is the session machine's, emitted with its stanza-id by our account")
    func chatMessage() throws {
        var parts = Parts()
        let outcome = try parts.read(
            "<message from='alice@example.test/phone' to='\(Self.own)' type='chat' id='m1'><body>hi</body><stanza-id xmlns='urn:xmpp:sid:0' by='\(Self.own.bare)' id='A9'/></message>"
        )
        guard case .session(let actions) = outcome, case .emitMessage(let message, nil) = actions.first else {
            Issue.record("not emitted by the session machine: \(outcome)")
            return
        }
        #expect(message.body == "hi")
        #expect(message.stanzaID == "A9")
    }

    @Test("a result of our archive's catch-up is the catch-up's; one for no query of ours is ignored as forged")
    func catchUpResults() throws {
        var parts = Parts()
        parts.catchUp = AccountCatchUp(machine: ArchiveCatchUpStateMachine(ownJID: Self.own, cursor: .after("A0"), configuration: .init()), holdLimit: 10)
        let forged = Dispatch.read(
            ArchiveCatchUpStateMachineTests.result(queryID: "nobody's", id: "A1"), inDoubt: &parts.inDoubt, rooms: &parts.rooms, catchUp: &parts.catchUp,
            machine: &parts.machine, now: { RoomInboundTests.t0 }
        )
        guard case .session(let actions) = forged, case .ignored = actions.first else {
            Issue.record("a result while no query runs was not ignored: \(forged)")
            return
        }
    }
}
