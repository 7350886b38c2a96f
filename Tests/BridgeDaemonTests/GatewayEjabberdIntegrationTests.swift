import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

/// Gateway mode against a real ejabberd (`ejabberd_service` listener, `mod_privilege`
/// granting roster access): the puppets are written into alice's roster (XEP-0356), and
/// messages cross both ways.
@Suite("gateway mode against a real ejabberd", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.ejabberdEnabled), .timeLimit(.minutes(3)))
struct GatewayEjabberdIntegrationTests {
    static let component = "home.example.test"

    @Test("ejabberd grants roster privilege: bob's puppet is written into alice's roster (XEP-0356) with his name and groups; alice ↔ bob cross both ways, and the bridge stops at once")
    func privilegedRosterAndMessages() async throws {
        let server = try await EjabberdServer.started(
            accounts: [("alice", "pw"), ("home", "pw"), ("bob", "pw")], components: [Self.component: GatewayFixture.secret]
        )
        defer { server.shutdown() }
        let home = try await TestSession.start("home", on: server, resource: "setup")
        try await home.session.setContact(try JID("bob@example.test"), name: "Bob", groups: ["Friends"])
        await home.stop()
        let gateway = try GatewayFixture.table(domain: Self.component, port: server.componentPort, in: server.directory, users: [("alice@example.test", "home")])
        let config = try BridgeConfigFile.write(for: server, accounts: ["home"], rest: gateway)
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        try await bridge.waitComponentConnected()
        #expect(await bridge.waitForLog { $0.contains("server privileges") && $0.contains("roster=both") }, "stderr: \(bridge.run.errors.suffix(3000))")

        // ejabberd writes the item but keeps the subscription it had (none for a new one):
        // its mod_roster handles a privileged set as a client's (RFC 6121 §2.1.2.5). Alice
        // subscribes as to any contact, and the puppet approves at once (the presence test
        // below). Nothing is suggested instead: the push was answered.
        let alice = try await TestSession.start("alice", on: server)
        let puppet = try GatewayFixture.puppet("bob@example.test", on: Self.component)
        let written = await alice.session.waitForRoster(timeout: .seconds(15)) { [puppet] in
            $0.items[puppet]?.name == "Bob" && $0.items[puppet]?.groups == ["Friends"]
        }
        let items = await alice.session.roster.items.values.map { "\($0.jid) \($0.subscription) \($0.name ?? "-") \($0.groups)" }
        #expect(written, "alice's roster: \(items); stderr: \(bridge.run.errors.suffix(3000))")
        #expect(!bridge.logLines.contains { $0.contains("suggesting puppets instead") }, "stderr: \(bridge.run.errors.suffix(3000))")

        let bob = try await TestSession.start("bob", on: server)
        try await alice.session.send(Message(type: .chat, to: puppet, id: "a1", body: "hi bob ✓"))
        #expect(await Received.message(bob.log, body: "hi bob ✓", timeout: .seconds(15))?.from?.bare.description == "home@example.test")
        try await bob.session.send(Message(type: .chat, to: try JID("home@example.test"), id: "b1", body: "hi alice ✓"))
        #expect(await Received.message(alice.log, body: "hi alice ✓", timeout: .seconds(15))?.from?.bare == puppet, "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(3000))")
        await alice.stop()
        await bob.stop()
    }

    @Test("on ejabberd too: markup, emoji and CJK both ways, a contact whose JID needs escaping, presence both ways, a stranger refused, and a user who links an account through the XEP-0077 form and unlinks it")
    func messagesPresenceAndRegistration() async throws {
        let server = try await EjabberdServer.started(
            accounts: [("alice", "pw"), ("home", "pw"), ("bob", "pw"), ("a\\b", "pw"), ("carol", "pw"), ("dave", "pw"), ("erin", GatewayIntegrationTests.erinPassword)],
            components: [Self.component: GatewayFixture.secret]
        )
        defer { server.shutdown() }
        // home and bob see each other's presence.
        let setup = try await TestSession.start("home", on: server, resource: "setup", policy: .acceptAll)
        let bobSetup = try await TestSession.start("bob", on: server, resource: "setup", policy: .acceptAll)
        try await setup.session.setContact(try JID("bob@example.test"), name: "Bob")
        try await setup.session.subscribe(to: try JID("bob@example.test"))
        try await bobSetup.session.subscribe(to: try JID("home@example.test"))
        let mutual = await setup.session.waitForRoster(timeout: .seconds(10)) { $0.items[try! JID("bob@example.test")]?.subscription == .both }
        #expect(mutual, "home and bob did not subscribe to each other")
        await setup.stop()
        await bobSetup.stop()
        let gateway = try GatewayFixture.table(
            domain: Self.component, port: server.componentPort, in: server.directory, users: [("alice@example.test", "home")], allow: ["alice@example.test", "dave@example.test"]
        )
        let config = try BridgeConfigFile.write(for: server, accounts: ["home"], rest: gateway)
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        try await bridge.waitComponentConnected()
        let stderr = { bridge.run.errors.suffix(3000) }
        let home = try JID("home@example.test")

        let alice = try await TestSession.start("alice", on: server, policy: .acceptAll)
        let bob = try await TestSession.start("bob", on: server)
        let bobPuppet = try GatewayFixture.puppet("bob@example.test", on: Self.component)
        let text = "<&>\"' 😀 漢字 ünïcode"
        try await alice.session.send(Message(type: .chat, to: bobPuppet, id: "a1", body: text))
        #expect(await Received.message(bob.log, body: text, timeout: .seconds(15))?.from?.bare == home, "stderr: \(stderr())")
        try await bob.session.send(Message(type: .chat, to: home, id: "b1", body: "back: " + text))
        #expect(await Received.message(alice.log, body: "back: " + text, timeout: .seconds(15))?.from?.bare == bobPuppet, "stderr: \(stderr())")

        let escaped = try await TestSession.start("a\\b", on: server)
        let escapedPuppet = try GatewayFixture.puppet("a\\b@example.test", on: Self.component)
        try await escaped.session.send(Message(type: .chat, to: home, id: "x1", body: "from a\\b"))
        #expect(await Received.message(alice.log, body: "from a\\b", timeout: .seconds(15))?.from?.bare == escapedPuppet, "stderr: \(stderr())")
        try await alice.session.send(Message(type: .chat, to: escapedPuppet, id: "x2", body: "to a\\b"))
        #expect(await Received.message(escaped.log, body: "to a\\b", timeout: .seconds(15))?.from?.bare == home)
        await escaped.stop()

        // Presence both ways.
        try await alice.session.subscribe(to: bobPuppet)
        try await bob.session.setPresence(show: .away, status: "lunch")
        let seen = await alice.log.waitFor(timeout: .seconds(15)) {
            if case .presence(let presence, _) = $0 { return presence.from?.bare == bobPuppet && presence.show == .away && presence.status == "lunch" }
            return false
        }
        #expect(seen != nil, "alice sees bob's presence from the puppet; stderr: \(stderr())")
        try await alice.session.setPresence(show: .dnd, status: "busy")
        let shown = await bob.log.waitFor(timeout: .seconds(15)) {
            if case .presence(let presence, _) = $0 { return presence.from?.bare == home && presence.show == .dnd && presence.status == "busy" }
            return false
        }
        #expect(shown != nil, "bob sees alice's presence on home; stderr: \(stderr())")

        // A stranger is refused.
        let carol = try await TestSession.start("carol", on: server)
        try await carol.session.send(Message(type: .chat, to: bobPuppet, id: "c1", body: "let me in"))
        guard let refusal = await Received.message(carol.log, where: { $0.type == .error && $0.id == "c1" }) else {
            Issue.record("no error for a stranger's message; stderr: \(stderr())")
            return
        }
        #expect(refusal.error?.condition == .registrationRequired)

        // Self-service linking and unlinking.
        let dave = try await TestSession.start("dave", on: server)
        _ = try await GatewayIntegrationTests.register(dave.session, as: "erin@example.test", password: GatewayIntegrationTests.erinPassword)
        try await bridge.waitOnline(["home+dave@example.test"])
        try await bob.session.send(Message(type: .chat, to: try JID("erin@example.test"), id: "e1", body: "hello erin"))
        #expect(await Received.message(dave.log, body: "hello erin", timeout: .seconds(15))?.from?.bare == bobPuppet, "stderr: \(stderr())")
        var remove = XMLElement(name: "query", namespace: "jabber:iq:register")
        remove.append(XMLElement(name: "remove", namespace: "jabber:iq:register"))
        _ = try await dave.session.request(IQ(type: .set, id: "r3", to: try JID(Self.component), payload: remove), timeout: .seconds(30))
        #expect(await bridge.waitForLog { $0.contains("gateway user unregistered") }, "stderr: \(stderr())")
        #expect(!bridge.run.errors.contains(GatewayIntegrationTests.erinPassword), "the password reached the log")
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
        await carol.stop()
        await dave.stop()
    }
}
