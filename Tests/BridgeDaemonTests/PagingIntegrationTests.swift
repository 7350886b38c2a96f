import Foundation
import IntegrationSupport
import NIOPosix
import TestServers
import TestSupport
import Testing
import TransportCore
import XMPP
import XMPPMapping

#if canImport(Glibc)
import Glibc
#endif

/// Paging (issue 24) with the real daemon, a real Prosody and real Alertmanagers
/// (Debian's `prometheus-alertmanager`, on loopback, notifying the bridge's webhook):
/// escalation, acknowledgement, silences, RESOLVED threading, an HA pair's duplicates.
@Suite("Paging against a real Alertmanager and Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct PagingIntegrationTests {
    static let token = "paging-token-for-tests"

    /// Prosody with alice (on call), bob (the next tier) and home (the bridge); the bridge
    /// with the HTTP ingress `web`, a socket subscriber `sub` and the channel `oncall`;
    /// `alertmanagers` Alertmanagers notifying it.
    /// The paging tests' configuration after the accounts: the http local `web` on `port`
    /// (token in `web.token`), the socket local `sub`, and the channel `oncall` from `web` to
    /// `member` and `sub`, with `channel`'s lines after its members.
    static func oncall(port: Int, member: String, channel: String) -> String {
        """
        [local.web]
        kind = "http"
        listen = "127.0.0.1:\(port)"
        token_file = "web.token"

        [local.sub]
        kind = "socket"
        path = "sub.sock"

        [channels.oncall]
        format = "{body}"
        members = [
          { local = "web" },
          \(member),
          { local = "sub", direction = "out" },
        ]
        \(channel)
        """
    }

    struct Setup {
        let server: ProsodyServer
        let alice: TestSession
        let bob: TestSession
        let alertmanagers: [AlertmanagerServer]
        let http: HTTPTestClient
        let config: String
        let subscriber: String

        static func start(alertmanagers count: Int, channel: String, upload: Bool = false) async throws -> Setup {
            let server =
                upload
                ? try await UploadServer.started(users: ["alice", "bob", "home"], httpHost: "localhost")
                : try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw"), ("home", "pw")])
            var alertmanagers: [AlertmanagerServer] = []
            do {
                let port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
                for _ in 0..<count {
                    alertmanagers.append(try AlertmanagerServer.start(webhookURL: "http://127.0.0.1:\(port)/hooks/alertmanager/oncall", token: PagingIntegrationTests.token))
                }
                try "\(PagingIntegrationTests.token)\n".write(toFile: "\(server.directory)/web.token", atomically: true, encoding: .utf8)
                chmod("\(server.directory)/web.token", 0o600)
                let config = try BridgeConfigFile.write(
                    for: server, accounts: ["home"],
                    rest: PagingIntegrationTests.oncall(
                        port: port, member: #"{ account = "home", jid = "alice@example.test", direction = "out" }"#,
                        channel: "alertmanager_url = \"\(alertmanagers.first?.url ?? "http://127.0.0.1:9")\"\n\(channel)"
                    )
                )
                let alice = try await TestSession.start("alice", on: server)
                let bob = try await TestSession.start("bob", on: server)
                return Setup(
                    server: server, alice: alice, bob: bob, alertmanagers: alertmanagers, http: HTTPTestClient(target: .tcp(port: port)), config: config,
                    subscriber: "\(server.directory)/sub.sock"
                )
            } catch {
                alertmanagers.forEach { $0.shutdown() }
                server.shutdown()
                throw error
            }
        }

        func startBridge() async throws -> BridgeDaemon {
            let bridge = try BridgeDaemon.start(config: self.config, in: self.server.directory)
            try await bridge.waitOnline(["home"])
            guard await bridge.waitForLog({ $0.contains("http ingress listening") }) else { throw TestFailure("ingress not listening: \(bridge.run.errors)") }
            for alertmanager in self.alertmanagers {
                let client = HTTPTestClient(target: .tcp(port: alertmanager.port))
                let ready = await eventually { (try? await client.get("/-/ready").status) == 200 }
                guard ready else { throw TestFailure("alertmanager not ready: \(alertmanager.log.suffix(2000))") }
            }
            return bridge
        }

        /// Posts an alert to one Alertmanager (API v2); `resolved` sets its end in the past.
        func fire(_ name: String, severity: String, resolved: Bool = false, to index: Int = 0) async throws {
            var alert: [String: Any] = ["labels": ["alertname": name, "severity": severity, "instance": "db1"], "annotations": ["summary": "\(name) on db1"]]
            if resolved { alert["endsAt"] = AlertAck.timestamp(Date().addingTimeInterval(-1)) }
            let body = String(decoding: try JSONSerialization.data(withJSONObject: [alert]), as: UTF8.self)
            let reply = try await HTTPTestClient(target: .tcp(port: self.alertmanagers[index].port))
                .post("/api/v2/alerts", headers: ["Content-Type": "application/json"], body: body)
            guard reply.status == 200 else { throw TestFailure("alertmanager refused the alert: \(reply)") }
        }

        func stop() async {
            await self.alice.stop()
            await self.bob.stop()
            self.alertmanagers.forEach { $0.shutdown() }
            self.server.shutdown()
        }
    }

    static let home = try! JID("home@example.test")

    @Test("a critical alert reaches alice; unacknowledged, bob gets it marked as escalated; alice's 'ack' tells both and the subscriber, GET /messages/{id} shows it; 'silence 2h' creates the silence in Alertmanager; RESOLVED is a reply to alice's FIRING copy")
    func pagerLoop() async throws {
        let setup = try await Setup.start(alertmanagers: 1, channel: #"escalate = [ { after = "2s", to = [ { account = "home", jid = "bob@example.test" } ] } ]"#)
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        try await bridge.waitForSocket(setup.subscriber)
        let subscriber = try UnixLineClient(path: setup.subscriber)
        try subscriber.send(#"{"subscribe":["oncall"]}"#)
        #expect(await subscriber.readObject()?["ok"] as? String == "subscribed")

        try await setup.fire("DiskFull", severity: "critical")
        let first = await setup.alice.log.messages(atLeast: 1, timeout: .seconds(20)).first
        let firing = try #require(first)
        #expect(firing.body?.contains("DiskFull") == true, "\(firing.body ?? "")")
        let escalated = await Received.bodies(setup.bob.log, count: 1, timeout: .seconds(20))
        #expect(escalated.first?.hasPrefix("escalated: not acknowledged by alice@example.test for ") == true, "\(escalated) \(bridge.run.errors.suffix(2000))")
        #expect(escalated.first?.contains("DiskFull") == true)

        // While the alert is open, words that are no command get the help line.
        try await setup.alice.session.send(Message(type: .chat, to: Self.home, body: "what now"))
        #expect(await Received.message(setup.alice.log, body: "Commands: ack · silence 2h (30m, 1d) · unsilence ID — or reply to the alert, or react to it.") != nil)
        try await setup.alice.session.send(Message(type: .chat, to: Self.home, body: "ack"))
        let toAlice = await setup.alice.log.waitFor(timeout: .seconds(10)) { if case .message(let message, nil) = $0 { message.body == "acknowledged by alice@example.test" } else { false } }
        #expect(toAlice != nil, "stderr: \(bridge.run.errors.suffix(2000))")
        let toBob = await Received.message(setup.bob.log, body: "acknowledged by alice@example.test")
        #expect(toBob != nil)
        var event: [String: Any]?
        while event == nil, let line = await subscriber.readObject(timeout: .seconds(10)) {
            if line["event"] as? String == "acknowledged" { event = line }
        }
        let id = try #require(event?["id"] as? String)
        #expect(event?["by"] as? String == "alice@example.test" && event?["how"] as? String == "command")
        let status = try await setup.http.get("/messages/\(id)", token: Self.token).json ?? [:]
        #expect(status["priority"] as? Int == 5, "\(status)")
        #expect((status["acknowledged"] as? [String: Any])?["by"] as? String == "alice@example.test", "\(status)")
        #expect((status["escalations"] as? [[String: Any]])?.first?["to"] as? [String] == ["home:bob@example.test"], "\(status)")

        // The group resolves: alice's client threads it under her FIRING copy.
        try await setup.fire("DiskFull", severity: "critical", resolved: true)
        let resolved = await setup.alice.log.waitFor(timeout: .seconds(20)) {
            if case .message(let message, nil) = $0 { message.body?.contains("RESOLVED") == true } else { false }
        }
        #expect(resolved != nil, "alertmanager: \(setup.alertmanagers[0].log.suffix(1500))")
        let resolution = (await setup.alice.log.messages(atLeast: 1)).last { $0.body?.contains("RESOLVED") == true }
        #expect(resolution.map(RichContent.parse)?.content.replyTo == firing.id, "\(String(describing: resolution))")

        // A silence from the phone, with the group's common labels as matchers.
        try await setup.alice.session.send(Message(type: .chat, to: Self.home, body: "silence 2h"))
        let answered = await setup.alice.log.waitFor(timeout: .seconds(10)) {
            if case .message(let message, nil) = $0 { message.body?.hasPrefix("silenced until ") == true } else { false }
        }
        #expect(answered != nil, "stderr: \(bridge.run.errors.suffix(2000))")
        let silences = try await HTTPTestClient(target: .tcp(port: setup.alertmanagers[0].port)).get("/api/v2/silences")
        let list = (try? JSONSerialization.jsonObject(with: Data(silences.body.utf8))) as? [[String: Any]] ?? []
        let silence = try #require(list.first, "\(silences)")
        #expect(silence["createdBy"] as? String == "alice@example.test")
        let matchers = (silence["matchers"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "")=\($0["value"] ?? "")" }.sorted()
        #expect(matchers == ["alertname=DiskFull", "instance=db1", "severity=critical"], "\(silence)")
        // And its end, from the phone: the silence expires in Alertmanager.
        let silenceID = try #require(silence["id"] as? String)
        if case .message(let answer, _) = answered {
            #expect(answer.body?.contains(silenceID) == true, "the answer names the silence: \(answer.body ?? "")")
        }
        try await setup.alice.session.send(Message(type: .chat, to: Self.home, body: "unsilence \(silenceID)"))
        #expect(await Received.message(setup.alice.log, body: "silence \(silenceID) expired") != nil, "stderr: \(bridge.run.errors.suffix(2000))")
        let after = try await HTTPTestClient(target: .tcp(port: setup.alertmanagers[0].port)).get("/api/v2/silence/\(silenceID)")
        #expect(((after.json?["status"] as? [String: Any])?["state"] as? String) == "expired", "\(after)")
        subscriber.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await setup.stop()
    }

    @Test("a reply (XEP-0461), a reaction (XEP-0444) and a displayed marker (XEP-0333) from alice each acknowledge an alert before its escalation, so bob never gets those; a delivery receipt (XEP-0184) does not: that alert, acknowledged null until then, escalates to bob")
    func acknowledgementKinds() async throws {
        let setup = try await Setup.start(
            alertmanagers: 0,
            channel: """
                ack = ["reply", "reaction", "displayed"]
                escalate = [ { after = "8s", to = [ { account = "home", jid = "bob@example.test" } ] } ]
                """
        )
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let alice = setup.alice
        var ids: [String] = []
        var copies: [String] = []
        for index in 1...4 {
            let posted = try await setup.http.post("/channels/oncall", token: Self.token, headers: ["X-Priority": "5"], body: "alert \(index)")
            ids.append(try #require(posted.json?["id"] as? String, "\(posted)"))
            let copy = try #require(await Received.message(alice.log, body: "alert \(index)"), "stderr: \(bridge.run.errors.suffix(2000))")
            copies.append(try #require(copy.id))
        }
        let before = try await setup.http.get("/messages/\(ids[3])", token: Self.token).json ?? [:]
        #expect(before["acknowledged"] is NSNull, "nobody took it yet: \(before)")

        func send(_ text: String?, _ content: RichContent) async throws {
            try await alice.session.send(Message.rich(to: Self.home, text, content))
        }
        try await send("on it", RichContent(replyTo: copies[0]))
        try await send(nil, RichContent(reactionTo: copies[1], reactions: ["👍"]))
        try await send(nil, RichContent(receiptFor: copies[2], receiptDisplayed: true))
        try await send(nil, RichContent(receiptFor: copies[3]))
        let acknowledged = await eventually(timeout: .seconds(20)) {
            await alice.log.messages.filter { $0.body == "acknowledged by alice@example.test" }.count >= 3
        }
        let seen = await Received.bodies(alice.log)
        #expect(acknowledged, "three acknowledgements: \(seen); stderr: \(bridge.run.errors.suffix(2000))")
        // The receipt reached the bridge (alice's copy of alert 4 is "received").
        let receipted = await eventually(timeout: .seconds(10)) {
            let status = (try? await setup.http.get("/messages/\(ids[3])", token: Self.token).json) ?? [:]
            let targets = status["targets"] as? [[String: Any]] ?? []
            return targets.contains { $0["target"] as? String == "home:alice@example.test" && $0["state"] as? String == "received" }
        }
        #expect(receipted, "alice's receipt was not recorded")
        for (index, how) in [(0, "reply"), (1, "reaction"), (2, "displayed")] {
            let status = try await setup.http.get("/messages/\(ids[index])", token: Self.token).json ?? [:]
            let ack = status["acknowledged"] as? [String: Any]
            #expect(ack?["by"] as? String == "alice@example.test" && ack?["how"] as? String == how, "alert \(index + 1): \(status)")
        }

        // The receipt's alert escalates; those acknowledged before would have reached bob
        // before it (their timers ran out first), so this is the marker that none did.
        let escalated = await Received.message(setup.bob.log, timeout: .seconds(30)) { $0.body?.contains("alert 4") == true }
        #expect(escalated?.body?.hasPrefix("escalated: not acknowledged by alice@example.test for ") == true, "\(String(describing: escalated?.body)); stderr: \(bridge.run.errors.suffix(2000))")
        let atBob = await Received.bodies(setup.bob.log)
        #expect(!atBob.contains { $0.contains("alert 1") || $0.contains("alert 2") || $0.contains("alert 3") }, "escalated after an ack: \(atBob)")
        let after = try await setup.http.get("/messages/\(ids[3])", token: Self.token).json ?? [:]
        #expect(after["acknowledged"] is NSNull && (after["escalations"] as? [[String: Any]])?.count == 1, "\(after)")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await setup.stop()
    }

    @Test("two Alertmanagers without gossip both notify: alice gets one message, the second request 202 with the same id; Grafana's repeated notification too")
    func haPairGivesOneMessage() async throws {
        let setup = try await Setup.start(alertmanagers: 2, channel: "")
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        // The same notification posted twice, as two replicas would: one id.
        let sample = ["Content-Type": "application/json"]
        let first = try await setup.http.post("/hooks/alertmanager/oncall", token: Self.token, headers: sample, body: WebhookSamples.alertmanagerFiring)
        let second = try await setup.http.post("/hooks/alertmanager/oncall", token: Self.token, headers: sample, body: WebhookSamples.alertmanagerFiring)
        #expect(first.status == 202 && second.status == 202, "\(first) \(second)")
        #expect(first.json?["id"] as? String != nil && first.json?["id"] as? String == second.json?["id"] as? String, "\(first) \(second)")
        try await setup.fire("CPUHot", severity: "warning", to: 0)
        try await setup.fire("CPUHot", severity: "warning", to: 1)
        // Grafana's copy of one notification (its rule uid) the same way.
        let grafana = try await setup.http.post("/hooks/grafana/oncall", token: Self.token, headers: sample, body: WebhookSamples.grafanaFiring)
        let grafanaAgain = try await setup.http.post("/hooks/grafana/oncall", token: Self.token, headers: sample, body: WebhookSamples.grafanaFiring)
        #expect(grafana.status == 202 && grafanaAgain.status == 202 && grafana.json?["id"] as? String == grafanaAgain.json?["id"] as? String, "\(grafana) \(grafanaAgain)")
        // Both replicas notified the bridge: the second copy of CPUHot is the third duplicate.
        let both = await eventually(timeout: .seconds(30)) {
            bridge.logLines.filter { $0.contains("notification already accepted; not relayed again") }.count >= 3
        }
        #expect(both, "alertmanagers: \(setup.alertmanagers.map { $0.log.suffix(800) })")
        // A marker after them: nothing more than one CPUHot message arrives before it.
        #expect(try await setup.http.post("/channels/oncall", token: Self.token, body: "marker").status == 202)
        _ = await Received.message(setup.alice.log, body: "marker")
        let bodies = await Received.bodies(setup.alice.log)
        #expect(bodies.filter { $0.contains("CPUHot") }.count == 1, "\(bodies)")
        #expect(bodies.filter { $0.contains("InstanceDown") }.count == 1, "\(bodies)")
        #expect(bodies.filter { $0.contains("High memory usage") }.count == 1, "\(bodies)")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await setup.stop()
    }

    @Test(
        "500 lines in a burst to alice with max_per_minute = 20: at most 21 messages; the digest's file (XEP-0363) holds every other line",
        .enabled(if: IntegrationEnvironment.uploadEnabled)
    )
    func floodIsCoalesced() async throws {
        let setup = try await Setup.start(alertmanagers: 0, channel: "max_per_minute = 20", upload: true)
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let lines = (1...500).map { String(format: "job %03d finished", $0) }
        for line in lines {
            let reply = try await setup.http.post("/channels/oncall", token: Self.token, body: line)
            #expect(reply.status == 202, "\(reply)")
        }
        // The minute ends a minute after the first line: the digest comes then.
        let digest = await setup.alice.log.waitFor(timeout: .seconds(90)) {
            if case .message(let message, nil) = $0 { message.body?.hasPrefix("+") == true } else { false }
        }
        #expect(digest != nil, "stderr: \(bridge.run.errors.suffix(2000))")
        #expect(try await setup.http.post("/channels/oncall", token: Self.token, headers: ["X-Priority": "5"], body: "marker").status == 202)
        _ = await Received.message(setup.alice.log, body: "marker")
        let bodies = await Received.bodies(setup.alice.log).filter { $0 != "marker" }
        #expect(bodies.count <= 21, "\(bodies.count) messages")
        let text = try #require(bodies.last)
        #expect(text.hasPrefix("+480 more: job 021 finished\n"), "\(text)")
        let url = try #require(text.split(separator: "\n").last.map(String.init))
        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: setup.server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("paging-flood-test")
        )
        let file = String(decoding: try await http.get(url: url, maxBytes: UploadServer.limit).bodyBytes, as: UTF8.self)
        let delivered = Array(bodies.dropLast()) + file.split(separator: "\n").dropFirst().map(String.init)
        #expect(delivered == lines, "lost \(Set(lines).subtracting(delivered).count), extra \(delivered.count - Set(delivered).count)")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await setup.stop()
    }

    @Test("kill -9 of the bridge after alice got a critical alert: the restarted bridge still escalates it to bob, once, and alice's 'ack' then stops nothing twice")
    func escalationSurvivesKill() async throws {
        let setup = try await Setup.start(alertmanagers: 0, channel: #"escalate = [ { after = "4s", to = [ { account = "home", jid = "bob@example.test" } ] } ]"#)
        let first = try await setup.startBridge()
        let posted = try await setup.http.post("/channels/oncall", token: Self.token, headers: ["X-Priority": "5"], body: "db1 down")
        #expect(posted.status == 202, "\(posted)")
        #expect(await Received.message(setup.alice.log, body: "db1 down") != nil)
        first.run.process.signal(SIGKILL)
        #expect(first.run.finish(timeout: 10) != 0)
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let escalated = await Received.bodies(setup.bob.log, count: 1, timeout: .seconds(20))
        #expect(escalated.count == 1 && escalated.first?.hasPrefix("escalated: not acknowledged by alice@example.test for ") == true, "\(escalated) \(bridge.run.errors.suffix(2000))")
        try await setup.alice.session.send(Message(type: .chat, to: Self.home, body: "ack"))
        #expect(await Received.message(setup.bob.log, body: "acknowledged by alice@example.test") != nil)
        // A marker after everything: bob got the escalation once.
        #expect(try await setup.http.post("/channels/oncall", token: Self.token, body: "marker").status == 202)
        _ = await Received.message(setup.alice.log, body: "marker")
        #expect(await Received.bodies(setup.bob.log).filter { $0.hasPrefix("escalated:") }.count == 1)
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await setup.stop()
    }
}
