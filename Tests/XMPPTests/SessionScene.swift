import Foundation
import Logging
import TestSupport
import Testing

@testable import XMPP

/// An ``XMPPSession`` under test on a manual clock, its connections given by a
/// ``SessionTestServer``, and the test's side of the current one: the one fixture of the
/// session's unit tests.
struct SessionScene {
    static let account = try! JID("bridge@example.test")
    /// Who the session under test says it is (XEP-0092, XEP-0115).
    static let software = SessionStateMachine<ManualClock.Instant>.Configuration(
        softwareName: "session-test", softwareVersion: "1.0", capabilitiesNode: "https://example.org/session-test"
    )

    let clock: ManualClock
    let server: SessionTestServer
    let session: XMPPSession<ManualClock>
    let running: Task<Void, Never>
    var events: SessionEventStream.AsyncIterator
    /// The connection the session is on now (replace it with the server's next one after a loss).
    var link: SessionTestServer.Link

    /// Starts a session (no roster, carbons or presence: only what a test asks for), and
    /// waits for its first connection. It reconnects at once: no backoff to step over.
    static func start(
        rooms: [RoomConfiguration] = [], configure: (inout XMPPSession<ManualClock>.Configuration) -> Void = { _ in }
    ) async throws -> SessionScene {
        let clock = ManualClock()
        let server = SessionTestServer(jid: Self.account)
        var configuration = XMPPSession<ManualClock>.Configuration(
            client: XMPPClientConfiguration(jid: Self.account), initialPresence: nil, fetchRoster: false, enableCarbons: false,
            session: Self.software,
            reconnect: .init(initialDelay: .zero), rooms: rooms
        )
        configure(&configuration)
        let session = XMPPSession(
            configuration: configuration, password: "pw", client: server, clock: clock, ids: StanzaIDGenerator(prefix: "s"), logger: Logger(label: "session-test")
        )
        let running = Task { await session.run() }
        let link = try await server.nextLink()
        return SessionScene(clock: clock, server: server, session: session, running: running, events: session.events.makeAsyncIterator(), link: link)
    }

    /// Waits for an event `matches` accepts (the ones before it are passed over).
    mutating func event(_ what: String, _ matches: (XMPPSessionEvent) -> Bool) async {
        while let event = await self.events.next() {
            if matches(event) { return }
        }
        Issue.record("the session ended before \(what)")
    }

    /// Sends `messages` with ``XMPPSession/sendAcknowledged(_:written:)``; the sender waits in
    /// the returned task.
    func send(_ messages: [Message]) -> Task<Void, any Error> {
        let session = self.session
        return Task { try await session.sendAcknowledged(messages) }
    }

    /// Expects message `id`, then its `<r/>`; with `acknowledge` the server answers it.
    func expectSent(_ id: String, acknowledge: Bool = true) async throws {
        _ = try await self.link.expect("message \(id)") { $0.name == "message" && $0[attribute: "id"] == id }
        _ = try await self.link.expect("a request for an acknowledgement", streamManagement: true) { $0.name == "r" }
        if acknowledge { try await self.link.send("<a xmlns='urn:xmpp:sm:3' h='\(self.link.received)'/>") }
    }

    /// Expects a query of an archive (XEP-0313: the room's, or the account's own when nil)
    /// and answers it with our messages `archived` (their ids, also their origin-ids), in
    /// one complete page.
    func answerArchiveQuery(of room: JID?, holding archived: [String]) async throws {
        try await self.answer(try await self.expectArchiveQuery(of: room), of: room, holding: archived)
    }

    /// Expects a query of an archive (the room's, or the account's own when nil).
    func expectArchiveQuery(of room: JID?) async throws -> XMLElement {
        try await self.link.expect("a query of \(room.map { "\($0)'s" } ?? "the account's") archive") {
            $0.name == "iq" && $0[attribute: "to"] == room?.description && $0.elements.first?.namespace == "urn:xmpp:mam:2"
        }
    }

    /// Answers `query` (``expectArchiveQuery(of:)``) with our messages `archived`.
    func answer(_ query: XMLElement, of room: JID?, holding archived: [String]) async throws {
        let iqID = try #require(query[attribute: "id"])
        let queryID = try #require(query.elements.first?[attribute: "queryid"])
        let archive = room ?? Self.account
        let sender = room.map { "\($0)/bridge" } ?? "\(Self.account)/bridge"
        let type = room == nil ? "chat" : "groupchat"
        for (index, id) in archived.enumerated() {
            try await self.link.send(
                """
                <message from='\(archive)' to='\(Self.account)/bridge'><result xmlns='urn:xmpp:mam:2' queryid='\(queryID)' id='a\(index)'>\
                <forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-11-29T10:00:00Z'/>\
                <message xmlns='jabber:client' type='\(type)' from='\(sender)' id='\(id)'><body>said \(id)</body><origin-id xmlns='urn:xmpp:sid:0' id='\(id)'/></message>\
                </forwarded></result></message>
                """
            )
        }
        try await self.link.send(
            "<iq type='result' id='\(iqID)' from='\(archive)'><fin xmlns='urn:xmpp:mam:2' complete='true'><set xmlns='http://jabber.org/protocol/rsm'/></fin></iq>"
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
