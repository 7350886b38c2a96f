import Foundation
import TestSupport
import Testing

@testable import XMPP

/// Stream management in the session (XEP-0198), without a server (``SessionScene``): what a
/// lost connection leaves unacknowledged is sent again on a resumed stream, settled by the
/// `h` of a `<failed/>`, or looked up in the account's archive; a server that stops
/// acknowledging is dropped and resumed.
@Suite("XMPPSession: stream management over a lost connection", .timeLimit(.minutes(1)))
struct XMPPSessionStreamManagementTests {
    static let bob = try! JID("bob@example.test")

    static func message(_ id: String) -> Message {
        Message(type: .chat, to: Self.bob, id: id, body: "said \(id)")
    }

    /// A session online, stream management enabled.
    static func online() async throws -> SessionScene {
        var scene = try await SessionScene.start()
        await scene.event("online") {
            if case .online = $0 { return true }
            return false
        }
        return scene
    }

    /// m1 sent, unacknowledged, the connection lost, and the next one being taken over: the
    /// resumption failed without h, so the session asks the archive about m1 (the query,
    /// not yet answered) and is not online.
    static func takingOverWithM1InDoubt() async throws -> (SessionScene, Task<Void, any Error>, XMLElement) {
        var scene = try await Self.online()
        let sender = scene.send([Self.message("m1")])
        try await scene.expectSent("m1", acknowledge: false)
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        return (scene, sender, try await scene.expectArchiveQuery(of: nil))
    }

    /// The connection the scene is on now reported online (each does, once).
    static func untilOnline(_ scene: inout SessionScene) async {
        await scene.event("online") {
            if case .online = $0 { return true }
            return false
        }
    }

    /// Nothing more was sent again: the next message is the next thing the server reads.
    static func nothingElse(_ scene: SessionScene) async throws {
        let next = scene.send([Self.message("after")])
        try await scene.expectSent("after")
        try await next.value
    }

    @Test("resumed (XEP-0198 §5) after the server dropped the connection, or after the watchdog dropped a server that stopped acknowledging (ack_timeout): on a server whose count is exact (Prosody, by XEP-0092) the unacknowledged message goes again on the resumed stream, once, unchecked, and its sender is told at that acknowledgement", arguments: [false, true])
    func resumption(serverFellSilent: Bool) async throws {
        var scene = try await Self.online()
        scene.server.software = "Prosody"
        let sender = scene.send([Self.message("m1")])
        try await scene.expectSent("m1", acknowledge: false)
        // The server had read everything before m1.
        let before = scene.link.received - 1
        scene.server.answerResumptions(["<resumed xmlns='urn:xmpp:sm:3' previd='PREVID' h='\(before)'/>"])
        if serverFellSilent {
            scene.clock.advance(by: XMPPSession<ManualClock>.Configuration(client: XMPPClientConfiguration(jid: SessionScene.account), session: SessionScene.software).acknowledgementTimeout)
        } else {
            await scene.link.drop()
        }
        scene.link = try await scene.server.nextLink()
        try await scene.expectSent("m1")
        try await sender.value
        try await Self.nothingElse(scene)
        await scene.stop()
    }

    @Test("two resumptions in a row, each with a message the server did not count: the server's software is asked at the first only (a resumed stream is the same server process); a new session asks again")
    func softwareAskedOncePerServerSession() async throws {
        var scene = try await Self.online()
        scene.server.software = "Prosody"
        for id in ["m1", "m2"] {
            let sender = scene.send([Self.message(id)])
            try await scene.expectSent(id, acknowledge: false)
            scene.server.answerResumptions(["<resumed xmlns='urn:xmpp:sm:3' previd='PREVID' h='\(scene.link.received - 1)'/>"])
            await scene.link.drop()
            scene.link = try await scene.server.nextLink()
            try await scene.expectSent(id)
            try await sender.value
            await Self.untilOnline(&scene)
        }
        #expect(scene.server.softwareAsked == 1)
        // No resumption this time (the server forgot the session): a new one, which may be
        // on a restarted server; its next uncounted message asks again.
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        await Self.untilOnline(&scene)
        let sender = scene.send([Self.message("m3")])
        try await scene.expectSent("m3", acknowledge: false)
        scene.server.answerResumptions(["<resumed xmlns='urn:xmpp:sm:3' previd='PREVID' h='\(scene.link.received - 1)'/>"])
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        try await scene.expectSent("m3")
        try await sender.value
        #expect(scene.server.softwareAsked == 2)
        try await Self.nothingElse(scene)
        await scene.stop()
    }

    @Test("resumed with an h that did not count the message, on a server that may route it all the same (ejabberd answers the resume before it parses what it read last; one that does not say is taken to): the account's archive is asked after the settle delay, and the message sent again only when it is not there", arguments: [(String?.none, true), (String?.none, false), ("ejabberd", true)])
    func uncountedAtResumeLookedUp(software: String?, archived: Bool) async throws {
        var scene = try await Self.online()
        scene.server.software = software
        let sender = scene.send([Self.message("m1")])
        try await scene.expectSent("m1", acknowledge: false)
        scene.server.answerResumptions(["<resumed xmlns='urn:xmpp:sm:3' previd='PREVID' h='\(scene.link.received - 1)'/>"])
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        // The session waits (the only timer due that soon) before it asks.
        let delay = try #require(XMPPSession<ManualClock>.Configuration(client: XMPPClientConfiguration(jid: SessionScene.account), session: SessionScene.software).archiveCheck).uncountedSettleDelay
        await scene.clock.waitForSleeper(until: scene.clock.now.advanced(by: delay))
        scene.clock.advance(by: delay)
        try await scene.answerArchiveQuery(of: nil, holding: archived ? ["m1"] : [])
        if !archived { try await scene.expectSent("m1") }
        try await sender.value
        try await Self.nothingElse(scene)
        await scene.stop()
    }

    @Test("<failed h/> counting the message: it reached the server; its sender is told so, nothing is sent again and no archive is asked")
    func failedWithItsCount() async throws {
        var scene = try await Self.online()
        let sender = scene.send([Self.message("m1")])
        try await scene.expectSent("m1", acknowledge: false)
        let handled = scene.link.received
        scene.server.answerResumptions(["<failed xmlns='urn:xmpp:sm:3' h='\(handled)'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>"])
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        try await sender.value
        try await Self.nothingElse(scene)
        await scene.stop()
    }

    @Test("<failed/> without h: the message is looked up in the account's archive; sent again only when it is not there, or when the server restarted since (it may have archived it and died before routing it)", arguments: [(true, false), (false, false), (true, true)])
    func failedAndLookedUp(archived: Bool, restarted: Bool) async throws {
        var scene = try await Self.online()
        // XEP-0012: a server up for a day has not restarted since the loss; one up 0 s has.
        scene.server.uptime = restarted ? 0 : 86_400
        let sender = scene.send([Self.message("m1")])
        try await scene.expectSent("m1", acknowledge: false)
        await scene.link.drop()
        scene.link = try await scene.server.nextLink()
        try await scene.answerArchiveQuery(of: nil, holding: archived ? ["m1"] : [])
        if !archived || restarted {
            // Not there, or not vouched for: sent again, once, before anything new.
            try await scene.expectSent("m1")
        }
        try await sender.value
        try await Self.nothingElse(scene)
        await scene.stop()
    }

    @Test("a message sent while the connection is taken over waits until it is online: what the in-doubt check sends again goes first, then it, numbered (XEP-0198 §4); none goes out before <enable/>")
    func newMessageWaitsForOnline() async throws {
        let (scene, sender, query) = try await Self.takingOverWithM1InDoubt()
        // Sent while m1 is in doubt and the session is not online again.
        let later = scene.send([Self.message("after")])
        try await scene.answer(query, of: nil, holding: [])
        try await scene.expectSent("m1")
        try await sender.value
        try await scene.expectSent("after")
        try await later.value
        // Counted on the new stream: the archive query, m1 and it.
        #expect(scene.link.received == 3)
        await scene.stop()
    }

    @Test("a delivery not taken in time drops a connection online all that time, never one still being taken over or online for less: that would start the take-over and its archive check again")
    func stalledDropLeavesATakeOverAlone() async throws {
        var (scene, sender, query) = try await Self.takingOverWithM1InDoubt()
        #expect(await scene.session.dropStalledConnection(notTakenFor: .seconds(30)) == false, "a connection being taken over was dropped")
        try await scene.answer(query, of: nil, holding: [])
        try await scene.expectSent("m1")
        try await sender.value
        await scene.event("online") {
            if case .online = $0 { return true }
            return false
        }
        #expect(await scene.session.dropStalledConnection(notTakenFor: .seconds(30)) == false, "a connection online for less than the timeout was dropped")
        scene.clock.advance(by: .seconds(30))
        #expect(await scene.session.dropStalledConnection(notTakenFor: .seconds(30)), "a connection online all the timeout was not dropped")
        scene.link = try await scene.server.nextLink()
        await scene.stop()
    }

    @Test("a server that stops reading: our acknowledgement to it waits on a write that never completes, and still the watchdog drops the connection at ack_timeout (each timer runs beside the others, never behind a write)")
    func watchdogNotHeldBackByAWrite() async throws {
        var scene = try await SessionScene.start { $0.acknowledgementDelay = .seconds(1) }
        await scene.event("online") {
            if case .online = $0 { return true }
            return false
        }
        // The server's message and its `<r/>`: our `<a/>` waits for the acknowledgement timer.
        try await scene.link.send("<message xmlns='jabber:client' type='chat' from='bob@example.test/phone' to='bridge@example.test/bridge' id='in1'><body>hi</body></message>")
        try await scene.link.send("<r xmlns='urn:xmpp:sm:3'/>")
        await scene.clock.waitForSleeper(until: scene.clock.now.advanced(by: .seconds(1)))
        scene.link.stopReading()
        // Its timer fires: the `<a/>` is written to a server that no longer reads, and waits.
        scene.clock.advance(by: .seconds(1))
        #expect(await untilTrue { scene.link.stall.heldCount == 1 }, "the acknowledgement was not written")
        // Ours, with its `<r/>`: unread, so unanswered; the watchdog times the answer.
        let sender = scene.send([Self.message("m1")])
        #expect(await untilTrue { scene.link.stall.heldCount == 3 }, "the message and its request were not written")
        scene.clock.advance(by: XMPPSession<ManualClock>.Configuration(client: XMPPClientConfiguration(jid: SessionScene.account), session: SessionScene.software).acknowledgementTimeout)
        // The connection is dropped for another, its waiting writes failed with it; the
        // resumption fails, so what was in flight is looked up and, not there, sent again.
        scene.link = try await scene.server.nextLink()
        #expect(scene.link.number == 2)
        try await scene.answerArchiveQuery(of: nil, holding: [])
        try await scene.expectSent("m1")
        try await sender.value
        try await Self.nothingElse(scene)
        await scene.stop()
    }
}
