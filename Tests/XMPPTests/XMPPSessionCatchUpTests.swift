import Foundation
import TestSupport
import Testing

@testable import XMPP

/// The archive catch-up's hold (XEP-0313, ``LiveMessageHold``), without a server
/// (``SessionScene``): a live message that arrives while the catch-up reads the account's
/// archive waits for it, and is handed over once, after the older archived ones.
@Suite("XMPPSession: live messages held for the archive catch-up", .timeLimit(.minutes(1)))
struct XMPPSessionCatchUpTests {
    static let bob = "bob@example.test/phone"

    /// A message from bob as the server sends it live, with its archive id.
    static func live(_ body: String, stanzaID: String) -> String {
        "<message from='\(Self.bob)' to='\(SessionScene.account)/bridge' type='chat' id='\(stanzaID)-m'><body>\(body)</body>"
            + "<stanza-id xmlns='urn:xmpp:sid:0' by='\(SessionScene.account)' id='\(stanzaID)'/></message>"
    }

    /// Bodies of the messages the session hands over, in order, until `last`.
    static func bodies(_ scene: inout SessionScene, until last: String) async -> [String] {
        var bodies: [String] = []
        await scene.event("message \(last)") {
            guard case .message(let message, _) = $0, let body = message.body else { return false }
            bodies.append(body)
            return body == last
        }
        return bodies
    }

    @Test("a live message during the catch-up waits for it: handed over once, after the archived ones, though the archive brought it too")
    func liveMessageHeld() async throws {
        var scene = try await SessionScene.start {
            $0.catchUp = ArchiveCatchUpStateMachine.Configuration()
            $0.archiveCursor = .after("a0")
        }
        let query = try await scene.link.expect("the catch-up's query of the account's archive") {
            $0.name == "iq" && $0[attribute: "to"] == nil && $0.elements.first?.namespace == "urn:xmpp:mam:2"
        }
        let iqID = try #require(query[attribute: "id"])
        let queryID = try #require(query.elements.first?[attribute: "queryid"])
        // Live, while the query runs: held.
        try await scene.link.send(Self.live("live", stanzaID: "s-live"))
        for (id, body) in [("a1", "archived"), ("s-live", "live")] {
            try await scene.link.send(
                """
                <message from='\(SessionScene.account)' to='\(SessionScene.account)/bridge'><result xmlns='urn:xmpp:mam:2' queryid='\(queryID)' id='\(id)'>\
                <forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-11-29T10:00:00Z'/>\
                <message xmlns='jabber:client' type='chat' from='\(Self.bob)' to='\(SessionScene.account)/bridge' id='\(id)-m'><body>\(body)</body></message>\
                </forwarded></result></message>
                """
            )
        }
        try await scene.link.send(
            "<iq type='result' id='\(iqID)'><fin xmlns='urn:xmpp:mam:2' complete='true'><set xmlns='http://jabber.org/protocol/rsm'><first>a1</first><last>s-live</last></set></fin></iq>"
        )
        // Then a marker, live: nothing else comes before it.
        try await scene.link.send(Self.live("marker", stanzaID: "s-marker"))
        let bodies = await Self.bodies(&scene, until: "marker")
        #expect(bodies == ["archived", "live", "marker"])
        await scene.stop()
    }
}
