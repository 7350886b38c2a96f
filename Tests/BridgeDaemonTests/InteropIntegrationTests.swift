import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The same tests against both real servers (issue 13: ejabberd as a second server):
/// login over STARTTLS and Direct TLS with SCRAM, `send`, the 1:1 relay with stream
/// management, catch-up from the archive after a restart of the bridge, and two linked
/// rooms with their archive.
@Suite("interop: Prosody and ejabberd", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct InteropIntegrationTests {
    enum Server: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case prosody
        case ejabberd

        var testDescription: String { self.rawValue }

        /// ``start(accounts:)`` off the threads async tests share: a start takes seconds.
        func started(accounts: [String]) async throws -> any TestXMPPServer {
            try await Subprocess.offThread { try self.start(accounts: accounts) }
        }

        func start(accounts: [String]) throws -> any TestXMPPServer {
            let pairs = accounts.map { ($0, "pw") }
            switch self {
            case .prosody:
                var options = ProsodyServer.Options()
                options.rooms = true
                options.archive = true
                return try ProsodyServer.start(options, accounts: pairs)
            case .ejabberd:
                return try EjabberdServer.start(accounts: pairs)
            }
        }
    }

    /// Prosody always; ejabberd under CI (where missing it fails) or where it can run.
    static var servers: [Server] { IntegrationEnvironment.ejabberdEnabled ? [.prosody, .ejabberd] : [.prosody] }

    static let link = """
        [channels.link]
        format = "[{account}] {nick}: {body}"
        members = [
          { account = "work", jid = "alice@example.test" },
          { account = "home", jid = "bob@example.test" },
        ]
        """

    @Test("login over STARTTLS and Direct TLS with SCRAM, and send", arguments: Self.servers)
    func loginAndSend(_ kind: Server) async throws {
        let server = try await kind.started(accounts: ["alice", "bob"])
        defer { server.shutdown() }
        let password = try CommandLineTests.write("pw\n", in: server.directory, name: "alice.password")
        chmod(password, 0o600)
        let arguments = CommandLineTests.accountArguments("alice", on: server, passwordFile: password)
        let startTLS = try MirrorSupport.command(["login"] + arguments, in: server.directory)
        #expect(startTLS.status == 0, "\(startTLS.errors)\n\(server.logTail(lines: 20))")
        #expect(startTLS.output.contains("(starttls) using SCRAM-SHA-"), "\(startTLS.output)")
        let direct = try MirrorSupport.command(
            ["login"] + arguments.map { $0 == "\(server.c2sPort)" ? "\(server.directTLSPort)" : $0 } + ["--tls-mode", "direct"], in: server.directory
        )
        #expect(direct.status == 0, "\(direct.errors)")
        #expect(direct.output.contains("(direct) using SCRAM-SHA-"), "\(direct.output)")

        let bob = try await TestSession.start("bob", on: server)
        let sent = try MirrorSupport.command(["send", "-m", "hello from \(kind) <&>"] + arguments + ["bob@example.test"], in: server.directory)
        #expect(sent.status == 0, "\(sent.errors)")
        #expect(await Received.message(bob.log, body: "hello from \(kind) <&>") != nil)
        await bob.stop()
    }

    @Test("the 1:1 relay both ways with stream management; what alice says while the bridge is down comes from the archive, once", arguments: Self.servers)
    func relayAndCatchUp(_ kind: Server) async throws {
        let server = try await kind.started(accounts: ["alice", "bob", "work", "home"])
        defer { server.shutdown() }
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let config = try BridgeConfigFile.write(for: server, accounts: ["work", "home"], rest: Self.link)
        var bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work", "home"])
        #expect(bridge.logLines.contains { $0.contains("stream management enabled") }, "\(bridge.run.errors)")

        // alice's phone asks for receipts, as Conversations does.
        var asking = Message(type: .chat, to: try JID("work@example.test"), body: "hi bob")
        asking.extensions = MessageReceipt.requests
        try await alice.session.send(asking)
        let relayed = await Received.message(bob.log, body: "[work] alice: hi bob")
        #expect(relayed != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        // Phone-safe (issue 11): chat, with a receipt request, markable and a store hint (the
        // link passes receipts back to alice, who asked), and the server passed them on.
        #expect(relayed?.type == .chat)
        let extensions = Set((relayed?.extensions ?? []).map { "\($0.namespace) \($0.name)" })
        #expect(extensions.isSuperset(of: ["urn:xmpp:receipts request", "urn:xmpp:chat-markers:0 markable", "urn:xmpp:hints store", "urn:xmpp:sid:0 origin-id"]), "\(extensions)")
        // A sender who asks for nothing: her copy asks for nothing either (issue 43: each
        // element costs the server, and its archive, on every message).
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "no receipt"))
        let plain = await Received.message(bob.log, body: "[work] alice: no receipt")
        let plainExtensions = Set((plain?.extensions ?? []).map { "\($0.namespace) \($0.name)" })
        #expect(plain != nil && plainExtensions.isDisjoint(with: ["urn:xmpp:receipts request", "urn:xmpp:chat-markers:0 markable", "urn:xmpp:hints store"]), "\(plainExtensions)")
        #expect(plainExtensions.contains("urn:xmpp:sid:0 origin-id"), "\(plainExtensions)")
        try await bob.session.send(Message(type: .chat, to: try JID("home@example.test"), body: "hi alice"))
        #expect(await Received.message(alice.log, body: "[home] bob: hi alice") != nil)

        #expect(bridge.stop() == 0)
        let missed = (1...3).map { "while down \($0)" }
        for text in missed { try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: text)) }
        // The server has them (archived, offline storage) once a round trip after them is back.
        try await alice.session.pingServer()
        bridge = try BridgeDaemon.start(config: config, in: server.directory)
        try await bridge.waitOnline(["work", "home"])
        for text in missed {
            #expect(await Received.message(bob.log, body: "[work] alice: \(text)", timeout: .seconds(20)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        }
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "marker"))
        #expect(await Received.message(bob.log, body: "[work] alice: marker") != nil)
        let bodies = await Received.bodies(bob.log).filter { $0.hasPrefix("[work] alice: ") }
        #expect(bodies == ["[work] alice: hi bob", "[work] alice: no receipt"] + missed.map { "[work] alice: \($0)" } + ["[work] alice: marker"], "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
    }

    @Test("two linked rooms: relayed once by nick, never echoed", arguments: Self.servers)
    func rooms(_ kind: Server) async throws {
        let server = try await kind.started(accounts: ["alice", "bob", "relay"])
        defer { server.shutdown() }
        let dev = RoomConfiguration(jid: try JID("dev@\(server.mucDomain)"), nick: "alice")
        let ops = RoomConfiguration(jid: try JID("ops@\(server.mucDomain)"), nick: "bob")
        let alice = try await TestSession.start("alice", on: server, rooms: [dev])
        let bob = try await TestSession.start("bob", on: server, rooms: [ops])
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["relay"],
            rest: """
                [channels.rooms]
                format = "{nick}: {body}"
                members = [
                  { account = "relay", room = "\(dev.jid)", nick = "bridge" },
                  { account = "relay", room = "\(ops.jid)", nick = "bridge" },
                ]
                """
        )
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        for room in [dev.jid, ops.jid] {
            #expect(await bridge.waitForLog(timeout: .seconds(20)) { $0.contains("joined room") && $0.contains("room=\(room)") }, "stderr: \(bridge.run.errors.suffix(3000))")
        }
        try await alice.say("hello ops", in: dev.jid)
        #expect(await bob.waitForRoomMessage(ops.jid) { $0 == "alice: hello ops" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        try await bob.say("hello dev", in: ops.jid)
        #expect(await alice.waitForRoomMessage(dev.jid) { $0 == "bob: hello dev" } != nil)
        try await alice.say("marker", in: dev.jid)
        #expect(await bob.waitForRoomMessage(ops.jid) { $0 == "alice: marker" } != nil)
        #expect(await bob.roomMessages(ops.jid).filter { $0.nick == "bridge" }.map(\.body) == ["alice: hello ops", "alice: marker"])
        #expect(await alice.roomMessages(dev.jid).filter { $0.nick == "bridge" }.map(\.body) == ["bob: hello dev"])
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
    }

    @Test("presence relay on a 1:1 link and a roster mirror", arguments: Self.servers)
    func presenceAndRosterMirror(_ kind: Server) async throws {
        let server = try await kind.started(accounts: ["alice", "bob", "work", "home", "carol"])
        defer { server.shutdown() }
        try await MirrorSupport.subscribeBothWays("work", "alice", on: server)
        try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work", "home"], bridge: "presence_interval_ms = 200",
            rest: Self.link + "\n\n[[roster_mirror]]\nfrom = \"work\"\nto = \"home\"\n"
        )
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work", "home"])
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let home = try MirrorSupport.jid("home", on: server)

        let mark = await bob.log.events.count
        try await alice.session.setPresence(show: .away, status: "in a meeting")
        let away = await bob.log.waitFor(after: mark, timeout: .seconds(10)) {
            guard let (presence, _) = MirrorSupport.presence($0, from: home) else { return false }
            return presence.type == .available && presence.show == .away && presence.status == "in a meeting"
        }
        #expect(away != nil, "bob never saw home away; stderr:\n\(bridge.run.errors.suffix(3000))")

        let work = try await TestSession.start("work", on: server, resource: "phone")
        let homeClient = try await TestSession.start("home", on: server, resource: "phone")
        let carol = try MirrorSupport.jid("carol", on: server)
        try await work.session.setContact(carol, name: "Carol")
        #expect(await MirrorSupport.poll { await homeClient.session.roster.items[carol]?.name == "Carol" } != nil, "stderr:\n\(bridge.run.errors.suffix(3000))")
        try await work.session.removeContact(carol)
        #expect(await MirrorSupport.poll { await homeClient.session.roster.items[carol] == nil } != nil)

        #expect(bridge.stop() == 0)
        for session in [alice, bob, work, homeClient] { await session.stop() }
    }

    @Test("kill -9 of the bridge mid inbound burst (alice → work → home → bob): the restarted bridge resumes both sessions; 0 lost, none relayed twice (0 repeats on Prosody)", arguments: Self.servers)
    func streamResumptionAfterKill(_ kind: Server) async throws {
        let server = try await kind.started(accounts: ["alice", "bob", "work", "home"])
        defer { server.shutdown() }
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work", "home"],
            rest: """
                [channels.link]
                format = "{body}"
                members = [
                  { account = "work", jid = "alice@example.test", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        let first = try BridgeDaemon.start(config: config, in: server.directory)
        defer { first.terminate() }
        try await first.waitOnline(["work", "home"])
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let sent = (1...500).map { String(format: "burst %03d", $0) }
        let work = try JID("work@example.test")
        try await alice.session.send(sent.map { Message(type: .chat, to: work, body: $0) })
        // Kill the bridge once bob has some of the burst.
        _ = await Received.bodies(bob.log, count: 50, timeout: .seconds(30))
        first.run.process.signal(SIGKILL)
        #expect(first.run.finish(timeout: 10) != 0)
        let atKill = await Received.bodies(bob.log).count

        let second = try BridgeDaemon.start(config: config, in: server.directory)
        defer { second.terminate() }
        try await second.waitOnline(["work", "home"])
        try await alice.session.send(Message(type: .chat, to: work, body: "marker"))
        #expect(await Received.message(bob.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(second.run.errors.suffix(3000))")
        // What the server still held for the killed session may come after the marker.
        _ = await Received.bodies(bob.log, count: 501, timeout: .seconds(20))
        let received = await Received.bodies(bob.log).filter { $0 != "marker" }
        let lost = sent.filter { !received.contains($0) }
        let duplicated = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.count
        print("[interop \(kind)] kill -9 mid burst: bob had \(atKill) at the kill; received \(Set(received).count) distinct of \(sent.count), lost \(lost.count), duplicated \(duplicated)")
        // Every copy bob got twice: the same stanza (same relay id, and so the same
        // origin-id, XEP-0359) or a second relay of the message (a new id)?
        var secondRelays: [String] = []
        for (body, _) in Dictionary(grouping: received, by: { $0 }).filter({ $0.value.count > 1 }).sorted(by: { $0.key < $1.key }) {
            let positions = received.indices.filter { received[$0] == body }
            let ids = await bob.log.messages.filter { $0.body == body }.map { $0.id ?? "-" }
            print("[interop \(kind)] duplicated: \(body) at \(positions), ids \(ids)")
            if Set(ids).count > 1 { secondRelays.append(body) }
        }
        #expect(lost.isEmpty, "lost: \(lost.prefix(20)); stderr: \(second.run.errors.suffix(2000))")
        // The bridge never relays a message twice (a new copy), on either server.
        #expect(secondRelays.isEmpty, "relayed twice: \(secondRelays); stderr: \(second.run.errors.suffix(2000))")
        // Prosody's resumed h covers every stanza it delivered: nothing arrives twice. ejabberd
        // 23.01 has been seen to deliver the last few stanzas written before the kill and
        // still report an h without them; the bridge then sends them again with the same id
        // and origin-id (XEP-0359), which clients use to drop the repeat. Counted, printed.
        if kind == .prosody { #expect(duplicated == 0, "stderr: \(second.run.errors.suffix(2000))") }
        // Order across the restart: kept on Prosody. On ejabberd one message in a run has been
        // seen a place late (an open finding, counted and printed, not yet asserted).
        let swapped = zip(received, received.dropFirst()).filter { $0 > $1 }.count
        print("[interop \(kind)] kill -9 mid burst: out-of-order neighbours \(swapped)")
        if kind == .prosody { #expect(received == sent, "out of order") }
        #expect(second.logLines.contains { $0.contains("stream resumed") && $0.contains("after restart=true") }, "stderr: \(second.run.errors.suffix(2000))")
        #expect(second.stop() == 0)
        await alice.stop()
        await bob.stop()
    }
}
