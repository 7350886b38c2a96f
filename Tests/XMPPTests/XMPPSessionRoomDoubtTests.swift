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
    static let account = try! JID("bridge@example.test")
    static let room = try! JID("dev@muc.example.test")

    /// A session in `room` on a fresh connection, and the test's side of it.
    struct Scene {
        let clock: ManualClock
        let server: SessionTestServer
        let session: XMPPSession<ManualClock>
        let running: Task<Void, Never>
        var events: SessionEventStream.AsyncIterator
        var link: SessionTestServer.Link

        static func joined() async throws -> Scene {
            let clock = ManualClock()
            let server = SessionTestServer(jid: XMPPSessionRoomDoubtTests.account)
            let configuration = XMPPSession<ManualClock>.Configuration(
                client: XMPPClientConfiguration(jid: XMPPSessionRoomDoubtTests.account), initialPresence: nil, fetchRoster: false, enableCarbons: false,
                // Reconnects at once: no backoff for the test to step over.
                reconnect: .init(initialDelay: .zero),
                rooms: [RoomConfiguration(jid: XMPPSessionRoomDoubtTests.room, nick: "bridge")]
            )
            let session = XMPPSession(
                configuration: configuration, password: "pw", client: server, clock: clock, ids: StanzaIDGenerator(prefix: "s"), logger: Logger(label: "session-test")
            )
            let running = Task { await session.run() }
            let link = try await server.nextLink()
            var scene = Scene(clock: clock, server: server, session: session, running: running, events: session.events.makeAsyncIterator(), link: link)
            try await scene.answerJoin()
            return scene
        }

        /// Expects our join of the room and lets us in (self-presence, XEP-0045 §7.2.3); with
        /// `reported`, waits until the session says it is in (after a check of its doubts).
        mutating func answerJoin(reported: Bool = true) async throws {
            _ = try await self.link.expect("the join of the room") { $0.name == "presence" && $0[attribute: "to"] == "\(XMPPSessionRoomDoubtTests.room)/bridge" }
            try await self.link.send(
                "<presence from='\(XMPPSessionRoomDoubtTests.room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'/><status code='110'/></x></presence>"
            )
            if reported { try await self.roomState(.joined) }
        }

        /// Waits for the session to report the room in `state`.
        mutating func roomState(_ state: RoomStatus.State) async throws {
            while let event = await self.events.next() {
                if case .roomChanged(let status) = event, status.state == state { return }
            }
            Issue.record("the session ended before the room was \(state)")
        }

        /// Says `id` in the room; the sender waits in the returned task.
        func say(_ id: String) async -> Task<Void, any Error> {
            let check = await self.session.checkRoomSend(to: XMPPSessionRoomDoubtTests.room, id: id)
            #expect(check == .joined)
            let session = self.session
            return Task { try await session.sendAcknowledged([Message(type: .groupchat, to: XMPPSessionRoomDoubtTests.room, id: id, body: "said \(id)")]) }
        }

        /// Expects `id` said in the room, and its `<r/>`, which the server answers: taken.
        func expectSaidAndAcknowledge(_ id: String) async throws {
            _ = try await self.link.expect("\(id) said in the room") { $0.name == "message" && $0[attribute: "id"] == id }
            _ = try await self.link.expect("a request for an acknowledgement", streamManagement: true) { $0.name == "r" }
            try await self.link.send("<a xmlns='urn:xmpp:sm:3' h='\(self.link.received)'/>")
        }

        /// The room takes us out, as Prosody 0.12 does when it is stopped (status 332).
        mutating func kick() async throws {
            try await self.link.send(
                "<presence type='unavailable' from='\(XMPPSessionRoomDoubtTests.room)/bridge'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='none'/><status code='110'/><status code='332'/></x></presence>"
            )
            try await self.roomState(.waiting)
        }

        /// Expects the archive query to the room and answers it with `archived` (our ids).
        func answerArchiveQuery(holding archived: [String]) async throws {
            let query = try await self.link.expect("a query of the room's archive") {
                $0.name == "iq" && $0[attribute: "to"] == XMPPSessionRoomDoubtTests.room.description && $0.elements.first?.namespace == "urn:xmpp:mam:2"
            }
            let iqID = try #require(query[attribute: "id"])
            let queryID = try #require(query.elements.first?[attribute: "queryid"])
            for (index, id) in archived.enumerated() {
                try await self.link.send(
                    """
                    <message from='\(XMPPSessionRoomDoubtTests.room)' to='\(XMPPSessionRoomDoubtTests.account)/bridge'><result xmlns='urn:xmpp:mam:2' queryid='\(queryID)' id='a\(index)'>\
                    <forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-11-29T10:00:00Z'/>\
                    <message xmlns='jabber:client' type='groupchat' from='\(XMPPSessionRoomDoubtTests.room)/bridge' id='\(id)'><body>said \(id)</body><origin-id xmlns='urn:xmpp:sid:0' id='\(id)'/></message>\
                    </forwarded></result></message>
                    """
                )
            }
            try await self.link.send(
                "<iq type='result' id='\(iqID)' from='\(XMPPSessionRoomDoubtTests.room)'><fin xmlns='urn:xmpp:mam:2' complete='true'><set xmlns='http://jabber.org/protocol/rsm'/></fin></iq>"
            )
        }

        /// Stops the session; the link answers what it asks meanwhile (a last `<r/>`).
        func stop() async {
            let link = self.link
            let serving = Task {
                while !Task.isCancelled { _ = try await link.next() }
            }
            await self.session.stop()
            await self.running.value
            serving.cancel()
        }
    }

    @Test("kicked after the room took our message and before its reflection: found in the room's archive after the rejoin, not said again")
    func foundInTheArchive() async throws {
        var scene = try await Scene.joined()
        let sender = await scene.say("m1")
        try await scene.expectSaidAndAcknowledge("m1")
        try await scene.kick()
        scene.clock.advance(by: RoomTimings().retryDelay)
        try await scene.answerJoin(reported: false)
        try await scene.answerArchiveQuery(holding: ["m1"])
        try await scene.roomState(.joined)
        try await sender.value
        // Nothing said again: the next thing said in the room is the next message.
        let next = await scene.say("m2")
        try await scene.expectSaidAndAcknowledge("m2")
        next.cancel()
        await scene.stop()
    }

    @Test("kicked before the reflection, and the room's archive does not have it: said again after the rejoin, before anything new")
    func missingFromTheArchive() async throws {
        var scene = try await Scene.joined()
        let sender = await scene.say("m1")
        try await scene.expectSaidAndAcknowledge("m1")
        try await scene.kick()
        scene.clock.advance(by: RoomTimings().retryDelay)
        try await scene.answerJoin(reported: false)
        try await scene.answerArchiveQuery(holding: [])
        try await scene.expectSaidAndAcknowledge("m1")
        try await scene.roomState(.joined)
        try await scene.link.send("<message type='groupchat' from='\(Self.room)/bridge' id='m1'><body>said m1</body><origin-id xmlns='urn:xmpp:sid:0' id='m1'/></message>")
        try await sender.value
        await scene.stop()
    }

    @Test("kicked before the reflection, then the connection lost: the next stream looks the message up in the room's archive before it rejoins")
    func connectionLostToo() async throws {
        var scene = try await Scene.joined()
        let sender = await scene.say("m1")
        try await scene.expectSaidAndAcknowledge("m1")
        try await scene.kick()
        await scene.link.drop()
        // The server forgot the session (its default answer to the resumption): a new one.
        scene.link = try await scene.server.nextLink()
        try await scene.answerArchiveQuery(holding: ["m1"])
        try await scene.answerJoin()
        try await sender.value
        let next = await scene.say("m2")
        try await scene.expectSaidAndAcknowledge("m2")
        next.cancel()
        await scene.stop()
    }
}
