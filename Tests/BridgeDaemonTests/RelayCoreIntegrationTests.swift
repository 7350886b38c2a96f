import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The rebuilt relay core (issue 8) with the real daemon and a real Prosody: what a socket
/// client was told is queued survives kill -9; an oversize message is split instead of
/// stopping the account; a socket subscriber that never reads stalls nothing else; a
/// `conflict` is retried, not the end of the account.
@Suite("relay core against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct RelayCoreIntegrationTests {
    static let socketToBob = """
        [local.ops]
        kind = "socket"
        path = "ops.sock"

        [channels.ops]
        format = "{body}"
        members = [
          { local = "ops", direction = "inout" },
          { account = "home", jid = "bob@example.test", direction = "out" },
        ]
        """

    @Test("kill -9 during socket intake: every message acknowledged to the client reaches bob after the restart")
    func killDuringSocketIntake() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["home"], contacts: ["bob"], rest: Self.socketToBob, sockets: ["ops.sock"])
        defer { scenario.shutdown() }
        let (first, bob, path) = (scenario.bridge, try scenario.contact("bob"), scenario.path("ops.sock"))

        let client = try UnixLineClient(path: path)
        let sent = (1...300).map { String(format: "burst %03d", $0) }
        for body in sent {
            try client.send(#"{"channel":"ops","body":"\#(body)","ack":true}"#)
        }
        // Acknowledgements come in order, one per line, each after the durable commit.
        var acknowledged = 0
        while acknowledged < 100, let answer = await client.readObject() {
            if answer["ok"] as? String == "queued" { acknowledged += 1 }
        }
        first.run.process.signal(SIGKILL)
        // Answers already on their way count too: the bridge said those were safe.
        while let answer = await client.readObject(timeout: .seconds(5)) {
            if answer["ok"] as? String == "queued" { acknowledged += 1 }
        }
        client.close()
        #expect(first.run.finish(timeout: 10) != 0)
        #expect(acknowledged >= 100)

        let second = try await scenario.startAgain(accounts: ["home"], sockets: ["ops.sock"])
        defer { second.terminate() }
        // A marker sent after the restart: once bob has it, the queue before it is through.
        let marker = try UnixLineClient(path: path)
        try marker.send(#"{"channel":"ops","body":"marker","ack":true}"#)
        #expect(await marker.readObject()?["ok"] as? String == "queued")
        #expect(await Received.message(bob.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(second.run.errors.suffix(3000))")
        let received = await Received.bodies(bob.log).filter { $0 != "marker" }
        let expected = Array(sent.prefix(acknowledged))
        let lost = expected.filter { !received.contains($0) }
        let duplicated = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.count
        print("kill -9 during socket intake: acknowledged \(acknowledged), received \(Set(received).count) distinct, lost \(lost.count), duplicated \(duplicated)")
        #expect(lost.isEmpty, "lost after kill -9: \(lost)")
        // Per target order holds across the restart.
        let firstSeen = received.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(firstSeen == firstSeen.sorted())
        marker.close()
        #expect(second.stop() == 0, "stderr: \(second.run.errors)")
        await bob.stop()
    }

    @Test("a 60,000-'&' message (300 kB escaped) reaches bob in parts; the account stays online and relays on")
    func poisonMessageSplit() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["home"], contacts: ["bob"], rest: Self.socketToBob, sockets: ["ops.sock"])
        defer { scenario.shutdown() }
        let (bridge, bob, path) = (scenario.bridge, try scenario.contact("bob"), scenario.path("ops.sock"))

        let body = String(repeating: "&", count: 60_000)
        let client = try UnixLineClient(path: path)
        try client.send(#"{"channel":"ops","body":"\#(body)"}"#)
        try client.send(#"{"channel":"ops","body":"after the big one"}"#)
        #expect(await Received.message(bob.log, body: "after the big one", timeout: .seconds(30)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let bodies = await Received.bodies(bob.log)
        let parts = bodies.dropLast()
        #expect(parts.count == 5, "\(bodies.map(\.count))")
        let text = parts.map { $0.drop { $0 != " " }.dropFirst() }.joined()
        #expect(text == body)
        #expect(!bridge.logLines.contains { $0.contains("transport=home") && $0.hasSuffix("] offline") }, "the account went offline")
        #expect(!bridge.run.errors.contains("policy-violation"))
        client.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await bob.stop()
    }

    @Test("a socket subscriber that never reads is disconnected; the XMPP link keeps relaying meanwhile")
    func stuckSubscriberIsolated() async throws {
        let server = try await ProsodyServer.started(accounts: DaemonScenario.users("alice", "bob", "work", "home"))
        defer { server.shutdown() }
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work", "home"],
            rest: """
                [local.ops]
                kind = "socket"
                path = "ops.sock"

                [channels.noisy]
                format = "{body}"
                members = [{ local = "ops", direction = "inout" }]

                [channels.link]
                format = "{body}"
                members = [
                  { account = "work", jid = "alice@example.test", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        let path = "\(server.directory)/ops.sock"
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work", "home"])
        try await bridge.waitForSocket(path)
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)

        let stuck = try UnixLineClient(path: path)
        try stuck.send(#"{"subscribe":["noisy"]}"#)
        #expect(await stuck.readObject()?["ok"] as? String == "subscribed")
        // From here on `stuck` reads nothing. 4,000 lines of 4 kB overflow its socket buffers.
        let talker = try UnixLineClient(path: path)
        let filler = String(repeating: "x", count: 4_000)
        for index in 1...4_000 {
            try talker.send(#"{"channel":"noisy","body":"\#(index) \#(filler)"}"#)
        }
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "through the other channel"))
        #expect(await Received.message(bob.log, body: "through the other channel", timeout: .seconds(20)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let disconnected = await bridge.waitForLog(timeout: .seconds(60)) { $0.contains("socket subscriber not reading; disconnected") }
        #expect(disconnected, "stderr: \(bridge.run.errors.suffix(3000))")
        // A new subscriber gets the channel's traffic.
        let fresh = try UnixLineClient(path: path)
        try fresh.send(#"{"subscribe":["noisy"]}"#)
        #expect(await fresh.readObject()?["ok"] as? String == "subscribed")
        try talker.send(#"{"channel":"noisy","body":"fresh marker"}"#)
        var seen = false
        while let line = await fresh.readObject(timeout: .seconds(30)) {
            if line["body"] as? String == "fresh marker" {
                seen = true
                break
            }
        }
        #expect(seen)
        // Said once, not once per line the stuck subscriber was still due.
        #expect(bridge.logLines.filter { $0.contains("socket subscriber not reading") }.count == 1, "\(bridge.logLines.filter { $0.contains("socket subscriber") }.prefix(5))")
        stuck.close()
        talker.close()
        fresh.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(3000))")
        await alice.stop()
        await bob.stop()
    }

    @Test("another client takes the bridge's resource (stream conflict): the account backs off, comes back and relays")
    func conflictThenRecovery() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["work", "home"],
            others: ["alice", "bob"],
            rest: """
                [channels.link]
                format = "{body}"
                members = [
                  { account = "work", jid = "alice@example.test", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        defer { scenario.shutdown() }
        let (server, bridge) = (scenario.server, scenario.bridge)

        let intruder = try await TestSession.start("home", on: server, resource: "bridge")
        let kicked = await bridge.waitForLog { $0.contains("transport=home") && $0.contains("conflict") }
        #expect(kicked, "stderr: \(bridge.run.errors)")
        await intruder.stop()
        let back = await bridge.waitForLog(timeout: .seconds(30)) { _ in
            bridge.logLines.filter { $0.contains("transport=home") && $0.hasSuffix("] online") }.count >= 2
        }
        #expect(back, "stderr: \(bridge.run.errors)")
        #expect(bridge.run.errors.contains("another client uses the same resource"))
        #expect(!bridge.run.errors.contains("account stopped"))

        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        try await alice.session.send(Message(type: .chat, to: try JID("work@example.test"), body: "after the conflict"))
        #expect(await Received.message(bob.log, body: "after the conflict") != nil, "stderr: \(bridge.run.errors)")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await alice.stop()
        await bob.stop()
    }

    @Test("a message to a JID that does not exist bounces into the dead letters; queue list, retry and drop act on it, with and without the daemon")
    func bounceToDeadLetters() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], rest: DaemonScenario.localChannel("ops", kind: "socket", path: "ops.sock", to: "ghost@example.test"), sockets: ["ops.sock", "bridge.control"]
        )
        defer { scenario.shutdown() }
        let (server, config, bridge, path) = (scenario.server, scenario.config, scenario.bridge, scenario.path("ops.sock"))
        let client = try UnixLineClient(path: path)
        try client.send(#"{"channel":"ops","body":"to nobody"}"#)
        #expect(await bridge.waitForLog { $0.contains("delivery moved to dead letters") }, "stderr: \(bridge.run.errors)")

        let list = try MirrorSupport.command(["queue", "list", "--json", "--config", config], in: server.directory)
        #expect(list.status == 0, "stderr: \(list.errors)")
        let entries = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]] ?? []
        #expect(entries.count == 1, "\(list.output)")
        #expect(entries.first?["state"] as? String == "dead")
        #expect(entries.first?["target"] as? String == "home:ghost@example.test")
        #expect((entries.first?["reason"] as? String)?.contains("service-unavailable") == true, "\(list.output)")
        let status = try MirrorSupport.command(["status", "--config", config], in: server.directory)
        #expect(status.output.contains("home [xmpp]  connected  queued 0  dead 1"), "\(status.output)")

        // Retried: it bounces again and is a dead letter again (its attempts go on).
        let sequence = try #require(entries.first?["sequence"] as? Int)
        let retry = try MirrorSupport.command(["queue", "retry", "\(sequence)", "--config", config], in: server.directory)
        #expect(retry.output.contains("retrying 1"), "\(retry.output) \(retry.errors)")
        let again = await bridge.waitForLog { _ in
            bridge.logLines.filter { $0.contains("delivery moved to dead letters") }.count >= 2
        }
        #expect(again, "stderr: \(bridge.run.errors)")
        client.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")

        // Without a daemon the database answers, and drop forgets it.
        let offline = try MirrorSupport.command(["queue", "list", "--config", config], in: server.directory)
        #expect(offline.output.contains("dead  home:ghost@example.test"), "\(offline.output)")
        let drop = try MirrorSupport.command(["queue", "drop", "--all-dead", "--config", config], in: server.directory)
        #expect(drop.output.contains("dropped 1"), "\(drop.output) \(drop.errors)")
        let empty = try MirrorSupport.command(["queue", "list", "--config", config], in: server.directory)
        #expect(empty.output.contains("nothing queued, no dead letters"), "\(empty.output)")
    }

    @Test("kill -9 with 200 FIFO lines queued while the server is down: after both restart, bob gets all 200 once, in order")
    func killWithFIFOLinesQueued() async throws {
        // bob logs in only after the outage.
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], others: ["bob"], rest: DaemonScenario.localChannel("alerts", kind: "fifo", path: "alerts.fifo"), sockets: ["bridge.control"]
        )
        defer { scenario.shutdown() }
        let (server, config, first, fifo) = (scenario.server, scenario.config, scenario.bridge, scenario.path("alerts.fifo"))
        server.stop()
        #expect(await first.waitOffline("home"), "stderr: \(first.run.errors)")

        let writer = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "for i in $(seq -w 1 200); do echo \"alert $i\"; done > '\(fifo)'"],
            stdin: "/dev/null", stdout: "\(server.directory)/writer.log", stderr: "\(server.directory)/writer.log"
        )
        #expect(writer.wait(timeout: 30) && writer.exitCode == 0)
        // The queue depth counts committed deliveries only: at 200, all are in the journal.
        let queued = await MirrorSupport.poll {
            let status = try? MirrorSupport.command(["status", "--config", config], in: server.directory)
            return status?.output.contains("home [xmpp]  not connected  queued 200") == true
        }
        #expect(queued != nil, "stderr: \(first.run.errors.suffix(2000))")
        first.run.process.signal(SIGKILL)
        #expect(first.run.finish(timeout: 10) != 0)

        try server.restart()
        let bob = try await TestSession.start("bob", on: server)
        let second = try await scenario.startAgain()
        defer { second.terminate() }
        let expected = (1...200).map { String(format: "alert %03d", $0) }
        let bodies = await Received.bodies(bob.log, count: 200, timeout: .seconds(60))
        #expect(bodies == expected, "stderr: \(second.run.errors.suffix(2000))")
        // Nothing twice: a marker written after them is the next thing bob gets.
        let marker = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo marker > '\(fifo)'"],
            stdin: "/dev/null", stdout: "\(server.directory)/marker.log", stderr: "\(server.directory)/marker.log"
        )
        #expect(marker.wait(timeout: 30) && marker.exitCode == 0)
        #expect(await Received.message(bob.log, body: "marker", timeout: .seconds(30)) != nil)
        #expect(await Received.bodies(bob.log) == expected + ["marker"])
        #expect(second.stop() == 0, "stderr: \(second.run.errors)")
        await bob.stop()
    }
}
