import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The `xmpp-bridge run` daemon against a real Prosody (issue 4, "Real Prosody" (i)–(vi),
/// and runtime routes).
///
/// Each test starts its own Prosody with one domain, example.test. The issue's alice@a and
/// bob@b become two users of that domain, alice and bob, linked through two accounts of the
/// bridge, `work` (alice's contact) and `home` (bob's contact); eve is a stranger and carol
/// a contact added at run time. The bridge is the built binary, run as a child process with
/// a generated `bridge.toml` whose state database, control socket, FIFO and socket live in
/// the server's temporary directory.
@Suite("xmpp-bridge run against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct BridgeIntegrationTests {
    static let link = """
        [channels.link]
        format = "[{account}] {nick}: {body}"
        members = [
          { account = "work", jid = "alice@example.test", direction = "inout" },
          { account = "home", jid = "bob@example.test", direction = "inout" },
        ]
        """

    @Test("(i) alice writes to account work, bob receives it from account home, and his reply reaches alice")
    func linkTwoAccounts() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], contacts: ["alice", "bob"], rest: Self.link)
        defer { scenario.shutdown() }
        let (bridge, alice, bob) = (scenario.bridge, try scenario.contact("alice"), try scenario.contact("bob"))

        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "hello bob <&> 😀"))
        let relayed = await Received.message(bob.log, body: "[work] alice: hello bob <&> 😀")
        let bobGot = await Received.bodies(bob.log)
        #expect(relayed?.from?.bare.description == "home@example.test", "bob got: \(bobGot)")
        #expect(relayed?.type == .chat)

        try await bob.session.send(Message(type: .chat, to: try JID("home@example.test"), body: "hi alice"))
        let reply = await Received.message(alice.log, body: "[home] bob: hi alice")
        let aliceGot = await Received.bodies(alice.log)
        #expect(reply?.from?.bare.description == "work@example.test", "alice got: \(aliceGot)")

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        // Nothing was relayed twice (no loop between the two accounts).
        #expect(await Received.bodies(bob.log) == ["[work] alice: hello bob <&> 😀"])
        #expect(await Received.bodies(alice.log) == ["[home] bob: hi alice"])
        await alice.stop()
        await bob.stop()
    }

    @Test("(ii) printf 'l1\\nl2\\n' | xmpp-bridge run: bob gets l1 then l2, and the bridge exits 0 by itself")
    func standardInputPipe() async throws {
        let server = try await ProsodyServer.started(accounts: DaemonScenario.users("bob", "home"))
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let input = "\(server.directory)/input.txt"
        try "l1\nl2\n".write(toFile: input, atomically: true, encoding: .utf8)
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["home"],
            rest: """
                [local.stdin]
                kind = "stdio"
                exit_on_eof = true
                nick = "printf"

                [channels.feed]
                format = "[{channel}] {nick}: {body}"
                members = [
                  { local = "stdin", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        let bridge = try BridgeDaemon.start(config: config, stdin: input, in: server.directory)
        defer { bridge.terminate() }

        #expect(bridge.run.finish(timeout: 60) == 0, "stdout: \(bridge.run.output)\nstderr: \(bridge.run.errors)")
        let bodies = await Received.bodies(bob.log, count: 2)
        #expect(bodies == ["[feed] printf: l1", "[feed] printf: l2"])
        await bob.stop()
    }

    @Test("(iii) three concurrent writers × 200 lines into the FIFO: all 600 reach bob, none broken, each writer's in order")
    func fifoConcurrentWriters() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], contacts: ["bob"], rest: DaemonScenario.localChannel("alerts", kind: "fifo", path: "alerts.fifo", options: [#"nick = "cron""#])
        )
        defer { scenario.shutdown() }
        let (server, bridge, bob) = (scenario.server, scenario.bridge, try scenario.contact("bob"))
        let fifo = scenario.path("alerts.fifo")
        let created = await eventually {
            var status = stat()
            return lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
        }
        try #require(created, "the bridge did not create \(fifo); stderr: \(bridge.run.errors)")
        var mode = stat()
        lstat(fifo, &mode)
        #expect(mode.st_mode & 0o777 == 0o600)

        // Each `echo` is one write(2) of a line shorter than PIPE_BUF, so the kernel keeps it whole.
        let writers = try (1...3).map { writer in
            try ChildProcess(
                executable: "/bin/sh",
                arguments: ["-c", "for i in $(seq 1 200); do echo \"w\(writer) line $i\"; done > '\(fifo)'"],
                stdin: "/dev/null", stdout: "\(server.directory)/writer\(writer).log", stderr: "\(server.directory)/writer\(writer).log"
            )
        }
        for writer in writers {
            #expect(writer.wait(timeout: 30) && writer.exitCode == 0)
        }

        let expected = (1...3).flatMap { writer in (1...200).map { "w\(writer) line \($0)" } }
        let bodies = await Received.bodies(bob.log, count: 600, timeout: .seconds(60))
        #expect(bodies.count == 600, "stderr: \(bridge.run.errors.suffix(2000))")
        #expect(Set(bodies) == Set(expected))
        for writer in 1...3 {
            let own = bodies.filter { $0.hasPrefix("w\(writer) ") }
            #expect(own == (1...200).map { "w\(writer) line \($0)" }, "writer \(writer)'s lines out of order")
        }
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await bob.stop()
    }

    @Test("(iv) socket: a subscribed client gets another client's message; oversize, bad JSON and unknown channel get errors; the connection stays usable")
    func socketClients() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], contacts: ["bob"],
            rest: DaemonScenario.localChannel("ops", kind: "socket", path: "ops.sock", options: ["max_line_bytes = 1024"], direction: "inout"), sockets: ["ops.sock"]
        )
        defer { scenario.shutdown() }
        let (bridge, bob) = (scenario.bridge, try scenario.contact("bob"))
        let path = scenario.path("ops.sock")
        var status = stat()
        lstat(path, &status)
        #expect(status.st_mode & 0o777 == 0o600)

        let subscriber = try UnixLineClient(path: path)
        try subscriber.send(#"{"subscribe":["ops"]}"#)
        let subscribed = try #require(await subscriber.readObject(), "no answer to subscribe; stderr: \(bridge.run.errors)")
        #expect(subscribed["ok"] as? String == "subscribed")
        #expect(subscribed["channels"] as? [String] == ["ops"])

        let sender = try UnixLineClient(path: path)
        try sender.send(#"{"channel":"ops","body":"hello"}"#)
        let hello = try #require(await subscriber.readObject(), "the subscriber got nothing; stderr: \(bridge.run.errors)")
        #expect(hello["body"] as? String == "hello")
        #expect(hello["channel"] as? String == "ops")

        try sender.send(String(repeating: "x", count: 2000))
        let tooLong = await sender.readObject()
        #expect((tooLong?["error"] as? String)?.contains("too long") == true, "got \(String(describing: tooLong))")

        try sender.send("{bad json")
        let badJSON = await sender.readObject()
        #expect((badJSON?["error"] as? String)?.contains("bad JSON") == true, "got \(String(describing: badJSON))")

        try sender.send(#"{"channel":"nope","body":"x"}"#)
        let unknown = await sender.readObject()
        #expect((unknown?["error"] as? String)?.contains("unknown channel") == true, "got \(String(describing: unknown))")

        // The same connection still works, for JSON and for plain lines.
        try sender.send(#"{"channel":"ops","body":"after the errors"}"#)
        #expect(await subscriber.readObject()?["body"] as? String == "after the errors")
        try sender.send("a plain line")
        #expect(await subscriber.readObject()?["body"] as? String == "a plain line")

        // bob is the channel's other receiving member; the rejected lines never reached anyone.
        let bodies = await Received.bodies(bob.log, count: 3)
        #expect(bodies == ["hello", "after the errors", "a plain line"])
        // The sender is not echoed its own messages; it got exactly the three errors.
        #expect(await sender.readLine(timeout: .milliseconds(500)) == nil)
        subscriber.close()
        sender.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await bob.stop()
    }

    @Test("(v) a stranger messages the bridge's account: nothing is relayed")
    func strangerNotRelayed() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], contacts: ["alice", "bob", "eve"], rest: Self.link)
        defer { scenario.shutdown() }
        let (bridge, alice, bob, eve) = (scenario.bridge, try scenario.contact("alice"), try scenario.contact("bob"), try scenario.contact("eve"))
        try await eve.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "open relay?"))
        try await eve.session.send(Message(type: .chat, to: try JID("home@example.test"), body: "open relay? (2)"))
        // Members' markers through each account, after the stranger's messages: once each has
        // gone round, anything relayed of eve's would have arrived before it.
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "member"))
        try await bob.session.send(Message(type: .chat, to: try JID("home@example.test"), body: "member too"))
        #expect(await Received.message(bob.log, body: "[work] alice: member") != nil, "stderr: \(bridge.run.errors)")
        #expect(await Received.message(alice.log, body: "[home] bob: member too") != nil, "stderr: \(bridge.run.errors)")
        #expect(await Received.bodies(bob.log) == ["[work] alice: member"])
        #expect(await Received.bodies(alice.log) == ["[home] bob: member too"])
        #expect(await Received.bodies(eve.log).isEmpty)
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await alice.stop()
        await bob.stop()
        await eve.stop()
    }

    @Test("(vi) Prosody stopped while 100 messages are sent: after the restart all 100 reach bob in order, once")
    func outageQueuesDurably() async throws {
        // bob logs in only after the outage.
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], others: ["bob"], rest: DaemonScenario.localChannel("ops", kind: "socket", path: "ops.sock", direction: "inout"), sockets: ["ops.sock"]
        )
        defer { scenario.shutdown() }
        let (server, bridge, path) = (scenario.server, scenario.bridge, scenario.path("ops.sock"))

        server.stop()
        #expect(await bridge.waitOffline("home"), "stderr: \(bridge.run.errors)")
        let client = try UnixLineClient(path: path)
        let sent = (1...100).map { String(format: "queued %03d", $0) }
        for body in sent {
            try client.send(#"{"channel":"ops","body":"\#(body)"}"#)
        }
        // Lines on one connection are handled in order: the answer to this one means all 100
        // were accepted, i.e. written to the durable queue.
        try client.send(#"{"channel":"nope","body":"marker"}"#)
        let marker = await client.readObject()
        #expect((marker?["error"] as? String)?.contains("unknown channel") == true, "got \(String(describing: marker))")

        try server.restart()
        // Prosody keeps messages for an offline bob (mod_offline), so it does not matter
        // whether bob or the bridge's reconnect comes first.
        let bob = try await TestSession.start("bob", on: server)
        let bodies = await Received.bodies(bob.log, count: 100, timeout: .seconds(60))
        #expect(bodies == sent, "stderr: \(bridge.run.errors.suffix(3000))")
        // Exactly once: a marker sent after the outage arrives right after the 100 (the
        // queue is in order), and nothing else.
        try client.send(#"{"channel":"ops","body":"marker after the outage"}"#)
        let after = await Received.bodies(bob.log, count: 101, timeout: .seconds(30))
        #expect(after.count == 101 && after.last?.hasSuffix("marker after the outage") == true, "\(after.suffix(3))")
        client.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await bob.stop()
    }

    @Test("route add/remove against the running bridge take effect at once, and route list shows them online and offline")
    func runtimeRoutes() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], contacts: ["alice", "bob", "carol"], rest: Self.link, sockets: ["bridge.control"])
        defer { scenario.shutdown() }
        let (server, config, bridge) = (scenario.server, scenario.config, scenario.bridge)
        let (alice, bob, carol) = (try scenario.contact("alice"), try scenario.contact("bob"), try scenario.contact("carol"))

        let add = try CommandLineTests.start(["route", "add", "link", "home:carol@example.test", "--config", config], in: server.directory)
        #expect(add.finish() == 0, "stderr: \(add.errors)")
        #expect(add.output.contains("added home:carol@example.test to link"))
        #expect(!add.errors.contains("no running bridge"), "the change went to the database, not the daemon")

        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "one"))
        #expect(await Received.message(carol.log, body: "[work] alice: one") != nil, "stderr: \(bridge.run.errors)")
        #expect(await Received.message(bob.log, body: "[work] alice: one") != nil)

        let online = try Self.routeList(config: config, in: server.directory)
        #expect(online.contains(RouteMember(transport: "home", address: "carol@example.test", direction: "inout")), "\(online)")
        #expect(online.contains(RouteMember(transport: "home", address: "bob@example.test", direction: "inout")), "\(online)")

        let remove = try CommandLineTests.start(["route", "remove", "link", "home:bob@example.test", "--config", config], in: server.directory)
        #expect(remove.finish() == 0, "stderr: \(remove.errors)")
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "two"))
        #expect(await Received.message(carol.log, body: "[work] alice: two") != nil)
        // A copy of "two" for bob would have left the bridge's home stream with carol's: the
        // server routes it before carol's, so before this marker carol sends bob afterwards.
        try await carol.session.send(Message(type: .chat, to: try JID("bob@example.test"), body: "marker from carol"))
        #expect(await Received.message(bob.log, body: "marker from carol") != nil)
        #expect(await Received.bodies(bob.log) == ["[work] alice: one", "marker from carol"])

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        // Without a daemon, `route list` reads the state database: the changes persisted.
        let offline = try Self.routeList(config: config, in: server.directory)
        #expect(offline.contains(RouteMember(transport: "home", address: "carol@example.test", direction: "inout")), "\(offline)")
        #expect(!offline.contains { $0.address == "bob@example.test" }, "\(offline)")
        #expect(offline.contains(RouteMember(transport: "work", address: "alice@example.test", direction: "inout")), "\(offline)")
        await alice.stop()
        await bob.stop()
        await carol.stop()
    }

    struct RouteMember: Hashable, CustomStringConvertible {
        var transport: String
        var address: String?
        var direction: String
        var description: String { "\(self.direction) \(self.transport):\(self.address ?? "")" }
    }

    /// `xmpp-bridge route list --json`: the members of channel `link`.
    static func routeList(config: String, in directory: String) throws -> [RouteMember] {
        let list = try CommandLineTests.start(["route", "list", "--json", "--config", config], in: directory)
        guard list.finish() == 0 else { throw TestFailure("route list failed: \(list.errors)") }
        let object = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [String: Any]
        let channels = object?["channels"] as? [[String: Any]] ?? []
        let link = channels.first { $0["name"] as? String == "link" }
        let members = link?["members"] as? [[String: Any]] ?? []
        return members.map {
            RouteMember(transport: $0["transport"] as? String ?? "", address: $0["address"] as? String, direction: $0["direction"] as? String ?? "")
        }
    }
}
