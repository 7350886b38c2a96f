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
        let query = try await scene.expectArchiveQuery(of: Self.room)
        // While the room's archive is asked, nothing new is said there.
        let meanwhile = await scene.session.checkRoomSend(to: Self.room, id: "m2")
        #expect(meanwhile != .joined, "a delivery went ahead of the lookup")
        try await scene.answer(query, of: Self.room, holding: archived ? ["m1"] : [])
        if !archived {
            try await scene.expectSent("m1")
            try await scene.link.send("<message type='groupchat' from='\(Self.room)/bridge' id='m1'><body>said m1</body><origin-id xmlns='urn:xmpp:sid:0' id='m1'/></message>")
        }
        try await scene.roomState(.joined)
        try await sender.value
        try await scene.nothingSaidAgain()
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
        try await scene.nothingSaidAgain()
        await scene.stop()
    }

    @Test("a batch of two said in the room, the first acknowledged (Prosody 0.12, stopping, counts a message its room refuses), then out of the room and the session lost: both looked up, both said again")
    func acknowledgedInPart() async throws {
        var scene = try await Self.joined()
        let check = await scene.session.checkRoomSend(to: Self.room, id: "m1")
        #expect(check == .joined)
        let sender = scene.send(["m1", "m2"].map { (id: String) in Message(type: .groupchat, to: Self.room, id: id, body: "said \(id)") })
        _ = try await scene.link.expect("message m1") { $0.name == "message" && $0[attribute: "id"] == "m1" }
        _ = try await scene.link.expect("message m2") { $0.name == "message" && $0[attribute: "id"] == "m2" }
        _ = try await scene.link.expect("a request for an acknowledgement", streamManagement: true) { $0.name == "r" }
        let first = scene.link.received - 1
        try await scene.link.send("<a xmlns='urn:xmpp:sm:3' h='\(first)'/>")
        try await scene.kick()
        scene.server.answerResumptions(["<failed xmlns='urn:xmpp:sm:3' h='\(first)'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>"])
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        // Neither reached the room: m1 too is looked up, and said again.
        try await scene.answerArchiveQuery(of: Self.room, holding: [])
        try await scene.answerJoin(reported: false)
        _ = try await scene.link.expect("m1 said again") { $0.name == "message" && $0[attribute: "id"] == "m1" }
        try await scene.expectSent("m2")
        for id in ["m1", "m2"] {
            try await scene.link.send("<message type='groupchat' from='\(Self.room)/bridge' id='\(id)'><body>said \(id)</body><origin-id xmlns='urn:xmpp:sid:0' id='\(id)'/></message>")
        }
        try await sender.value
        try await scene.roomState(.joined)
        try await scene.nothingSaidAgain()
        await scene.stop()
    }

    @Test("two rooms take us out at once (a server shutting down): their archive checks run side by side, each reads its own results")
    func twoRooms() async throws {
        let other = try JID("ops@muc.example.test")
        var scene = try await SessionScene.start(rooms: [RoomConfiguration(jid: Self.room, nick: "bridge"), RoomConfiguration(jid: other, nick: "bridge")])
        try await scene.letInEachJoin(2)
        try await scene.roomState(.joined, Self.room)
        try await scene.roomState(.joined, other)
        let first = await scene.say("m1")
        try await scene.expectSent("m1")
        let second = await scene.say("m2", in: other)
        try await scene.expectSent("m2")
        try await scene.kick()
        try await scene.kick(from: other)
        scene.clock.advance(by: RoomTimings().retryDelay)
        try await scene.letInEachJoin(2)
        // Both rooms' queries under way at once; answered in the other order.
        var queries: [JID: XMLElement] = [:]
        for _ in 0..<2 {
            let query = try await scene.link.expect("a room's archive query") { $0.name == "iq" && $0.elements.first?.namespace == "urn:xmpp:mam:2" }
            queries[try JID(try #require(query[attribute: "to"]))] = query
        }
        try await scene.answer(try #require(queries[other]), of: other, holding: ["m2"])
        try await scene.answer(try #require(queries[Self.room]), of: Self.room, holding: ["m1"])
        try await first.value
        try await second.value
        try await scene.roomState(.joined, Self.room)
        try await scene.nothingSaidAgain()
        await scene.stop()
    }
}

extension SessionScene {
    /// Expects our join of `room` and lets us in (self-presence, XEP-0045 §7.2.3); with
    /// `reported`, waits until the session says it is in (after a check of its doubts).
    mutating func answerJoin(_ room: JID = XMPPSessionRoomDoubtTests.room, reported: Bool = true) async throws {
        _ = try await self.link.expect("the join of \(room)") { $0.name == "presence" && $0[attribute: "to"] == "\(room)/bridge" }
        try await self.letIn(room)
        if reported { try await self.roomState(.joined, room) }
    }

    /// Lets us into the rooms of the next `count` joins, whichever rooms and order.
    func letInEachJoin(_ count: Int) async throws {
        for _ in 0..<count {
            let join = try await self.link.expect("a join") { $0.name == "presence" }
            try await self.letIn(try JID(try #require(join[attribute: "to"])).bare)
        }
    }

    /// The self-presence that lets us into `room`.
    func letIn(_ room: JID) async throws {
        try await self.link.send(
            "<presence from='\(room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'/><status code='110'/></x></presence>"
        )
    }

    /// Waits for the session to report `room` in `state`.
    mutating func roomState(_ state: RoomStatus.State, _ room: JID = XMPPSessionRoomDoubtTests.room) async throws {
        await self.event("\(room) \(state)") {
            if case .roomChanged(let status) = $0 { return status.state == state && status.jid == room.description }
            return false
        }
    }

    /// Says `id` in `room`; the sender waits in the returned task.
    func say(_ id: String, in room: JID = XMPPSessionRoomDoubtTests.room) async -> Task<Void, any Error> {
        let check = await self.session.checkRoomSend(to: room, id: id)
        #expect(check == .joined)
        return self.send([Message(type: .groupchat, to: room, id: id, body: "said \(id)")])
    }

    /// Nothing was said again: the next thing said in the room is a new message.
    func nothingSaidAgain() async throws {
        let next = await self.say("next")
        try await self.expectSent("next")
        next.cancel()
    }

    /// `room` takes us out, as Prosody 0.12 does when it is stopped (status 332).
    mutating func kick(from room: JID = XMPPSessionRoomDoubtTests.room) async throws {
        try await self.link.send(
            "<presence type='unavailable' from='\(room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='none'/><status code='110'/><status code='332'/></x></presence>"
        )
        try await self.roomState(.waiting, room)
    }
}
