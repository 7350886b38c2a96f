import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// Messages, subscriptions, rosters, presence and reconnect against a real Prosody (RFC 6121).
@Suite("Sessions against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct SessionIntegrationTests {
    static let bodies: [String] = [
        "plain <&>\"' text",
        "emoji 😀🎉 and CJK 中文 日本語 한국어",
        String(repeating: "0123456789<&>ü中", count: 100_000 / 16),
    ]

    @Test("waitForRoster returns when a push (here from the account's other client) brings the roster there, and false after its timeout")
    func waitForRosterPush() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let watcher = try await TestSession.start("alice", on: server, resource: "watcher")
        let other = try await TestSession.start("alice", on: server, resource: "other")
        let carol = try JID("carol@example.test")
        #expect(await watcher.session.roster.items[carol] == nil)
        // Registered before the change; only the push to this resource can satisfy it.
        async let seen = watcher.session.waitForRoster(timeout: .seconds(10)) { $0.items[carol]?.name == "Carol" }
        try await other.session.setContact(carol, name: "Carol")
        #expect(await seen)
        #expect(await watcher.session.roster.items[carol]?.name == "Carol")
        #expect(await watcher.session.waitForRoster(timeout: .milliseconds(300)) { $0.items[carol]?.name == "Someone else" } == false)
        await watcher.stop()
        await other.stop()
    }

    @Test("two accounts exchange chat, normal and headline messages, including a 100 kB body")
    func exchangeMessages() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        var sent: [(Message.Kind, String)] = []
        for kind in [Message.Kind.chat, .normal, .headline] {
            for body in Self.bodies {
                try await alice.session.send(Message(type: kind, to: bob.jid, body: body, subject: kind == .headline ? "Alert ⚠" : nil))
                sent.append((kind, body))
            }
        }
        try await bob.session.send(Message(type: .chat, to: alice.jid, body: "reply <&> 😀"))
        let received = await bob.log.messages(atLeast: sent.count)
        #expect(received.count == sent.count)
        for (message, expected) in zip(received, sent) {
            #expect(message.type == expected.0)
            #expect(message.body == expected.1)
            #expect(message.from == alice.jid)
            if expected.0 == .headline { #expect(message.subject == "Alert ⚠") }
        }
        let reply = await alice.log.messages(atLeast: 1)
        #expect(reply.first?.body == "reply <&> 😀")
        await alice.stop()
        await bob.stop()
    }

    @Test("subscription both ways: rosters show both, presence is seen, removal propagates")
    func subscriptionsAndPresence() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let aliceBare = alice.jid.bare
        let bobBare = bob.jid.bare

        // alice asks; bob's default policy (accept known) does not approve a stranger by itself.
        try await alice.session.subscribe(to: bobBare)
        let request = await bob.log.waitFor {
            if case .subscriptionRequest(let from, _) = $0 { return from == aliceBare }
            return false
        }
        #expect(request != nil)
        try await bob.session.approveSubscription(from: aliceBare)
        // bob asks back; alice knows bob now and approves automatically.
        try await bob.session.subscribe(to: aliceBare)

        #expect(await Self.waitForRoster(alice, contact: bobBare, subscription: .both))
        #expect(await Self.waitForRoster(bob, contact: aliceBare, subscription: .both))

        // Presence changes are seen by the other side.
        try await bob.session.setPresence(show: .away, status: "in a meeting")
        let seen = await alice.log.waitFor {
            if case .presence(let presence, _) = $0 { return presence.from?.bare == bobBare && presence.show == .away }
            return false
        }
        guard case .presence(let presence, let best) = seen else {
            Issue.record("alice never saw bob away")
            return
        }
        #expect(presence.status == "in a meeting")
        #expect(best?.show == .away)

        // alice removes bob: alice's roster loses him, bob's item for alice drops to none.
        try await alice.session.removeContact(bobBare)
        #expect(await Self.waitForRoster(alice, contact: bobBare, subscription: nil))
        #expect(await Self.waitForRoster(bob, contact: aliceBare, subscription: RosterItem.Subscription.none))
        await alice.stop()
        await bob.stop()
    }

    @Test("after Prosody is killed and restarted, a running session reconnects and receives new messages")
    func reconnectAfterServerRestart() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        server.kill()
        let offline = await bob.log.waitFor { if case .offline = $0 { true } else { false } }
        #expect(offline != nil)
        try server.restart()
        // A second .online is the reconnect.
        var onlineCount = 0
        _ = await eventually(timeout: .seconds(30), every: .milliseconds(50)) {
            onlineCount = await bob.log.events.filter { if case .online = $0 { true } else { false } }.count
            return onlineCount >= 2
        }
        #expect(onlineCount == 2)

        let alice = try await TestSession.start("alice", on: server)
        try await alice.session.send(Message(type: .chat, to: bob.jid, body: "after the restart"))
        let received = await bob.log.waitFor {
            if case .message(let message, nil) = $0 { return message.body == "after the restart" }
            return false
        }
        #expect(received != nil)
        await alice.stop()
        await bob.stop()
    }

    @Test("a stranger's messages arrive as events but a stranger cannot push our roster")
    func strangerCannotPushRoster() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("eve", "pw")])
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let eve = try await TestSession.start("eve", on: server)
        // eve sends a roster push straight to alice's full JID.
        let push = IQ(type: .set, id: "evil-1", to: alice.jid, payload: Roster.setItem(RosterItem(jid: try JID("mallory@example.test"))))
        await #expect(throws: XMPPSessionError.self) {
            _ = try await eve.session.request(push, timeout: .seconds(5))
        }
        #expect(await alice.session.roster.items[try JID("mallory@example.test")] == nil)
        await alice.stop()
        await eve.stop()
    }

    static func waitForRoster(_ account: TestSession, contact: JID, subscription: RosterItem.Subscription?) async -> Bool {
        await eventually(timeout: .seconds(10)) { await account.session.roster.items[contact]?.subscription == subscription }
    }
}
