import Foundation
import Logging
import TestSupport
import Testing

@testable import XMPP

/// Out of a room before it reflected what we said there (issue 39: Prosody 0.12, stopped,
/// takes every occupant out of its rooms first, and the reflections of messages its rooms
/// had taken never came): the messages may or may not be in the room, so they are looked up
/// in the room's archive after the rejoin, and only the missing ones are said again. The
/// session runs over an in-memory connection (``SessionTestServer``); the test plays the
/// server and the room.
@Suite("XMPPSession: left a room before its reflections", .timeLimit(.minutes(1)))
struct XMPPSessionRoomDoubtTests {
    static let room = try! JID("dev@muc.example.test")

    static func joined() async throws -> SessionScene {
        var scene = try await SessionScene.start(rooms: [RoomConfiguration(jid: Self.room, nick: "bridge")])
        try await scene.answerJoin()
        return scene
    }

    @Test("kicked after the room took our message and before its reflection: looked up in the room's archive after the rejoin, said again (before anything new) only when it is not there", arguments: [true, false])
    func lookedUpAfterTheRejoin(archived: Bool) async throws {
        var scene = try await Self.joined()
        let sender = await scene.say("m1")
        try await scene.expectSent("m1")
        try await scene.kick()
        scene.clock.advance(by: RoomTimings().retryDelay)
        try await scene.answerJoin(reported: false)
        try await scene.answerArchiveQuery(of: Self.room, holding: archived ? ["m1"] : [])
        if !archived {
            try await scene.expectSent("m1")
            try await scene.link.send("<message type='groupchat' from='\(Self.room)/bridge' id='m1'><body>said m1</body><origin-id xmlns='urn:xmpp:sid:0' id='m1'/></message>")
        }
        try await scene.roomState(.joined)
        try await sender.value
        // Nothing else said again: the next thing said in the room is the next message.
        let next = await scene.say("m2")
        try await scene.expectSent("m2")
        next.cancel()
        await scene.stop()
    }

    @Test("kicked before the reflection, then the connection lost: the next stream looks the message up in the room's archive before it rejoins")
    func connectionLostToo() async throws {
        var scene = try await Self.joined()
        let sender = await scene.say("m1")
        try await scene.expectSent("m1")
        try await scene.kick()
        await scene.link.drop()
        // The server forgot the session (its default answer to the resumption): a new one.
        scene.link = try await scene.server.nextLink()
        try await scene.answerArchiveQuery(of: Self.room, holding: ["m1"])
        try await scene.answerJoin()
        try await sender.value
        let next = await scene.say("m2")
        try await scene.expectSent("m2")
        next.cancel()
        await scene.stop()
    }
}

extension SessionScene {
    /// Expects our join of the test's room and lets us in (self-presence, XEP-0045 §7.2.3);
    /// with `reported`, waits until the session says it is in (after a check of its doubts).
    mutating func answerJoin(reported: Bool = true) async throws {
        let room = XMPPSessionRoomDoubtTests.room
        _ = try await self.link.expect("the join of the room") { $0.name == "presence" && $0[attribute: "to"] == "\(room)/bridge" }
        try await self.link.send(
            "<presence from='\(room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'/><status code='110'/></x></presence>"
        )
        if reported { try await self.roomState(.joined) }
    }

    /// Waits for the session to report the room in `state`.
    mutating func roomState(_ state: RoomStatus.State) async throws {
        await self.event("the room \(state)") {
            if case .roomChanged(let status) = $0 { return status.state == state }
            return false
        }
    }

    /// Says `id` in the room; the sender waits in the returned task.
    func say(_ id: String) async -> Task<Void, any Error> {
        let room = XMPPSessionRoomDoubtTests.room
        let check = await self.session.checkRoomSend(to: room, id: id)
        #expect(check == .joined)
        return self.send([Message(type: .groupchat, to: room, id: id, body: "said \(id)")])
    }

    /// The room takes us out, as Prosody 0.12 does when it is stopped (status 332).
    mutating func kick() async throws {
        try await self.link.send(
            "<presence type='unavailable' from='\(XMPPSessionRoomDoubtTests.room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='none'/><status code='110'/><status code='332'/></x></presence>"
        )
        try await self.roomState(.waiting)
    }
}
