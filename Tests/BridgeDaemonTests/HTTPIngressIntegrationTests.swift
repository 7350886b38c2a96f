import Foundation
import HTTPIngress
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import TransportCore
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP ingress (issue 11) with the real daemon and a real Prosody: curl-style text,
/// JSON, Alertmanager and Grafana webhooks reach the phone-side peer as `chat`; refusals
/// (401, 404, 413) relay nothing; a 202 survives kill -9; receipts and displayed markers
/// reach `GET /messages/{id}` and socket subscribers; `/metrics` is valid Prometheus text.
@Suite("HTTP ingress against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct HTTPIngressIntegrationTests {
    static let token = "s3cret-token-for-tests"

    /// A bridge with account `home`, the HTTP ingress `web` on a free port, a socket
    /// subscriber `sub`, and channels into bob: `alerts` (default template) and `custom`
    /// (a template file).
    struct Setup {
        let server: ProsodyServer
        let bob: TestSession
        let config: String
        let http: HTTPTestClient
        let metrics: HTTPTestClient
        let subscriber: String

        static func start(extraUsers: [(String, String)] = [], extraConfig: String = "", accounts: [String] = ["home"]) async throws -> Setup {
            let server = try await ProsodyServer.started(accounts: [("bob", "pw"), ("home", "pw"), ("alice", "pw")] + extraUsers)
            do {
                let bob = try await TestSession.start("bob", on: server)
                let ports = try ProsodyServer.freeLoopbackPorts(count: 2)
                try "\(HTTPIngressIntegrationTests.token)\n".write(toFile: "\(server.directory)/web.token", atomically: true, encoding: .utf8)
                chmod("\(server.directory)/web.token", 0o600)
                try "{{commonLabels.severity}}|{{#firing}}{{name}}@{{labels.instance}};{{/firing}}<&>".write(
                    toFile: "\(server.directory)/custom.mustache", atomically: true, encoding: .utf8
                )
                let config = try BridgeConfigFile.write(
                    for: server, accounts: accounts,
                    rest: """
                        [local.web]
                        kind = "http"
                        listen = "127.0.0.1:\(ports[0])"
                        token_file = "web.token"
                        max_body_bytes = 4096

                        [local.sub]
                        kind = "socket"
                        path = "sub.sock"

                        [channels.alerts]
                        format = "{body}"
                        members = [
                          { local = "web" },
                          { account = "home", jid = "bob@example.test", direction = "out" },
                          { local = "sub", direction = "out" },
                        ]

                        [channels.custom]
                        format = "{body}"
                        template_file = "custom.mustache"
                        members = [ { local = "web" }, { account = "home", jid = "bob@example.test", direction = "out" } ]
                        \(extraConfig)
                        """
                )
                // metrics_listen belongs in [bridge], which the helper writes first.
                var text = try String(contentsOfFile: config, encoding: .utf8)
                text = text.replacingOccurrences(of: "[bridge]\n", with: "[bridge]\nmetrics_listen = \"127.0.0.1:\(ports[1])\"\n")
                try text.write(toFile: config, atomically: true, encoding: .utf8)
                return Setup(
                    server: server, bob: bob, config: config, http: HTTPTestClient(target: .tcp(port: ports[0])),
                    metrics: HTTPTestClient(target: .tcp(port: ports[1])), subscriber: "\(server.directory)/sub.sock"
                )
            } catch {
                server.shutdown()
                throw error
            }
        }

        func startBridge() async throws -> BridgeDaemon {
            let bridge = try BridgeDaemon.start(config: self.config, in: self.server.directory)
            try await bridge.waitOnline(["home"])
            guard await bridge.waitForLog({ $0.contains("http ingress listening") }) else {
                throw TestFailure("ingress not listening: \(bridge.run.errors)")
            }
            return bridge
        }

        func stop() async {
            await self.bob.stop()
            self.server.shutdown()
        }
    }

    static func rendered(_ json: String, template: WebhookTemplate = .standard) throws -> String {
        template.render(try WebhookPayload(json: Array(json.utf8)))
    }

    @Test("text, JSON, Alertmanager and Grafana payloads reach bob as chat with the rendered text; 401, 404, 413 and 422 relay nothing")
    func payloadsReachThePhone() async throws {
        let setup = try await Setup.start()
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let http = setup.http
        let token = Self.token

        // Refusals first: none of them may reach bob.
        #expect(try await http.post("/channels/alerts", body: "no token").status == 401)
        #expect(try await http.post("/channels/alerts", token: "wrong", body: "wrong token").status == 401)
        #expect(try await http.post("/channels/nope", token: token, body: "unknown channel").status == 404)
        #expect(try await http.post("/channels/alerts", token: token, body: String(repeating: "x", count: 5000)).status == 413)
        #expect(try await http.post("/channels/alerts", token: token, headers: ["Content-Type": "application/json"], body: "{\"body\": ").status == 400)
        #expect(try await http.post("/channels/alerts", token: token, headers: ["Content-Type": "image/png"], body: "png").status == 415)
        #expect(try await http.post("/hooks/alertmanager/alerts", token: token, headers: ["Content-Type": "application/json"], body: "{\"x\":1}").status == 422)

        // curl -d "backup done": form-encoded content type, the body as text.
        let text = try await http.post("/channels/alerts", token: token, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: "backup done <&>")
        #expect(text.status == 202, "\(text)")
        #expect(text.json?["status"] as? String == "queued")
        let json = try await http.post(
            "/channels/alerts", token: token, headers: ["Content-Type": "application/json"],
            body: #"{"body":"disk 91% on db1 — 🔥 ünïcode","subject":"Disk"}"#
        )
        #expect(json.status == 202, "\(json)")
        let alertmanager = try await http.post("/hooks/alertmanager/alerts", token: token, headers: ["Content-Type": "application/json"], body: WebhookSamples.alertmanagerFiring)
        #expect(alertmanager.status == 202, "\(alertmanager)")
        let grafana = try await http.post("/hooks/grafana/alerts", token: token, headers: ["Content-Type": "application/json"], body: WebhookSamples.grafanaFiring)
        #expect(grafana.status == 202, "\(grafana)")
        let custom = try await http.post("/hooks/alertmanager/custom", token: token, headers: ["Content-Type": "application/json"], body: WebhookSamples.alertmanagerFiring)
        #expect(custom.status == 202, "\(custom)")
        let marker = try await http.post("/channels/alerts", token: token, body: "marker")
        #expect(marker.status == 202)

        #expect(await Received.message(setup.bob.log, body: "marker", timeout: .seconds(30)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let messages = await setup.bob.log.messages.filter { $0.body != nil }
        let expected = [
            "backup done <&>",
            "disk 91% on db1 — 🔥 ünïcode",
            try Self.rendered(WebhookSamples.alertmanagerFiring),
            try Self.rendered(WebhookSamples.grafanaFiring),
            "page|InstanceDown@db1:9100;InstanceDown@web2:9100;<&>",
            "marker",
        ]
        #expect(messages.map { $0.body ?? "" } == expected)
        #expect(expected[2].hasPrefix("🔥 FIRING (2)\n• InstanceDown: db1:9100 has been down"), "\(expected[2])")
        // Phone-safe: chat, from the account, asking for a receipt and a marker, stored.
        for message in messages {
            #expect(message.type == .chat)
            #expect(message.from?.bare.description == "home@example.test")
            #expect(message.extensions.contains { $0.name == "request" && $0.namespace == "urn:xmpp:receipts" })
            #expect(message.extensions.contains { $0.name == "markable" && $0.namespace == "urn:xmpp:chat-markers:0" })
        }
        #expect(messages[1].subject == "Disk")
        #expect(bridge.run.errors.contains("http request refused"))
        #expect(!bridge.run.errors.contains(Self.token), "the token was logged")
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await setup.stop()
    }

    @Test("kill -9 right after the 202s: after the restart bob gets every accepted message once")
    func killAfterAccepted() async throws {
        let setup = try await Setup.start()
        let first = try await setup.startBridge()
        defer { first.terminate() }
        var accepted: [String] = []
        for index in 1...60 {
            let body = String(format: "alert %03d", index)
            let reply = try await setup.http.post("/channels/alerts", token: Self.token, body: body)
            if reply.status == 202 { accepted.append(body) }
        }
        first.run.process.signal(SIGKILL)
        #expect(first.run.finish(timeout: 10) != 0)
        #expect(accepted.count == 60)

        let second = try await setup.startBridge()
        defer { second.terminate() }
        #expect(try await setup.http.post("/channels/alerts", token: Self.token, body: "marker").status == 202)
        #expect(await Received.message(setup.bob.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(second.run.errors.suffix(3000))")
        let received = await Received.bodies(setup.bob.log).filter { $0 != "marker" }
        let lost = accepted.filter { !received.contains($0) }
        let duplicated = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.count
        print("HTTP kill -9 after 202: accepted \(accepted.count), received \(Set(received).count) distinct, lost \(lost.count), duplicated \(duplicated)")
        #expect(lost.isEmpty, "lost: \(lost)")
        #expect(duplicated == 0)
        #expect(second.stop() == 0, "stderr: \(second.run.errors)")
        await setup.stop()
    }

    @Test("?wait=sent answers once the server took it; bob's receipt and displayed marker reach GET /messages/{id} and socket subscribers; a stranger's do not")
    func receiptsReachStatus() async throws {
        let setup = try await Setup.start()
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        try await bridge.waitForSocket(setup.subscriber)
        let subscriber = try UnixLineClient(path: setup.subscriber)
        try subscriber.send(#"{"subscribe":["alerts"]}"#)
        #expect(await subscriber.readObject()?["ok"] as? String == "subscribed")

        let reply = try await setup.http.post("/channels/alerts?wait=sent", token: Self.token, body: "please confirm")
        #expect(reply.status == 200, "\(reply)")
        #expect(reply.json?["state"] as? String == "sent")
        let id = try #require(reply.json?["id"] as? String)
        let message = try #require(await Received.message(setup.bob.log, body: "please confirm"))
        let relayID = try #require(message.id)

        // A stranger claims bob read it: ignored.
        let alice = try await TestSession.start("alice", on: setup.server)
        try await alice.session.send(Self.confirmation("displayed", namespace: "urn:xmpp:chat-markers:0", id: relayID, to: "home@example.test"))
        // bob's receipt, then his displayed marker.
        try await setup.bob.session.send(Self.confirmation("received", namespace: "urn:xmpp:receipts", id: relayID, to: "home@example.test"))
        var status = try await self.waitForState("received", id: id, http: setup.http)
        #expect(status?["state"] as? String == "received", "\(status ?? [:])")
        try await setup.bob.session.send(Self.confirmation("displayed", namespace: "urn:xmpp:chat-markers:0", id: relayID, to: "home@example.test"))
        status = try await self.waitForState("displayed", id: id, http: setup.http)
        #expect(status?["state"] as? String == "displayed", "\(status ?? [:])")
        let targets = status?["targets"] as? [[String: Any]] ?? []
        #expect(targets.contains { $0["target"] as? String == "home:bob@example.test" && $0["state"] as? String == "displayed" }, "\(targets)")

        // The subscriber saw the relayed message, then bob's receipt and marker, with the id the ingress gave.
        var events: [[String: Any]] = []
        while events.count < 3, let line = await subscriber.readObject(timeout: .seconds(10)) {
            if line["event"] as? String == "receipt" || line["body"] as? String == "please confirm" { events.append(line) }
        }
        let receipts = events.filter { $0["event"] as? String == "receipt" }
        #expect(receipts.map { $0["status"] as? String ?? "" } == ["received", "displayed"], "\(events)")
        #expect(receipts.allSatisfy { $0["id"] as? String == id && $0["target"] as? String == "home:bob@example.test" && $0["channel"] as? String == "alerts" })
        #expect(try await setup.http.get("/messages/nope", token: Self.token).status == 404)
        #expect(try await setup.http.get("/messages/\(id)").status == 401)
        subscriber.close()
        await alice.stop()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await setup.stop()
    }

    @Test("/metrics is valid Prometheus text with the relay's counters; /health/ready is 503 while an account is stopped")
    func metricsAndHealth() async throws {
        let setup = try await Setup.start(
            extraUsers: [("bad", "not-pw")],
            extraConfig: """

                [channels.other]
                members = [ { account = "bad", jid = "bob@example.test" }, { local = "sub" } ]
                """,
            accounts: ["home", "bad"]
        )
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        #expect(try await setup.http.post("/channels/alerts?wait=sent", token: Self.token, body: "counted").status == 200)
        #expect(try await setup.http.post("/channels/nope", token: Self.token, body: "x").status == 404)
        #expect(await bridge.waitForLog { $0.contains("transport=bad") && $0.contains("transport stopped") }, "stderr: \(bridge.run.errors)")

        let live = try await setup.metrics.get("/health/live")
        #expect(live.status == 200)
        let ready = try await setup.metrics.get("/health/ready")
        #expect(ready.status == 503, "\(ready)")
        #expect((ready.json?["problems"] as? [String])?.contains { $0.hasPrefix("account bad stopped") } == true, "\(ready)")

        let scrape = try await setup.metrics.get("/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = scrape.body.split(separator: "\n").map(String.init)
        for expected in [
            #"xmpp_bridge_messages_received_total{transport="web"} 1"#,
            #"xmpp_bridge_messages_relayed_total{transport="home",channel="alerts"} 1"#,
            #"xmpp_bridge_http_requests_total{local="web",status="200"} 1"#,
            #"xmpp_bridge_http_requests_total{local="web",status="404"} 1"#,
            #"xmpp_bridge_transport_connected{transport="home",kind="xmpp"} 1.0"#,
            #"xmpp_bridge_transport_stopped{transport="bad"} 1.0"#,
            #"xmpp_bridge_ready 0.0"#,
            #"xmpp_bridge_relay_latency_seconds_count 2"#,  // bob and the socket subscriber
        ] {
            #expect(lines.contains(expected), "missing \(expected) in\n\(scrape.body)")
        }
        try Self.checkWithPromtool(scrape.body, in: setup.server.directory)
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await setup.stop()
    }

    @Test("SIGHUP with a new token in the token file: the ingress restarts on the same port; the old token is refused, the new one relays")
    func tokenRotation() async throws {
        let setup = try await Setup.start()
        let bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let wrongMethod = try await setup.http.request("GET", "/channels/alerts", headers: ["Authorization": "Bearer \(Self.token)"])
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["allow"] == "POST")
        let listening = bridge.logLines.filter { $0.contains("http ingress listening") }.count
        try "rotated-token\n".write(toFile: "\(setup.server.directory)/web.token", atomically: true, encoding: .utf8)
        chmod("\(setup.server.directory)/web.token", 0o600)
        bridge.run.process.signal(SIGHUP)
        #expect(await bridge.waitForLog { _ in bridge.logLines.filter { $0.contains("http ingress listening") }.count > listening }, "stderr: \(bridge.run.errors)")
        #expect(try await setup.http.post("/channels/alerts", token: Self.token, body: "old token").status == 401)
        #expect(try await setup.http.post("/channels/alerts", token: "rotated-token", body: "after rotation").status == 202)
        #expect(await Received.message(setup.bob.log, body: "after rotation", timeout: .seconds(30)) != nil)
        #expect(await Received.bodies(setup.bob.log) == ["after rotation"])
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await setup.stop()
    }

    /// `promtool check metrics` (Debian's prometheus package): parses and lints (HELP on
    /// every metric, names, units); required under CI.
    static func checkWithPromtool(_ text: String, in directory: String) throws {
        guard Subprocess.which("promtool") != nil else {
            if IntegrationEnvironment.isCI { throw TestFailure("promtool is missing (apt-get install prometheus)") }
            print("promtool not installed: /metrics checked by the expected lines only")
            return
        }
        do {
            try Subprocess.run("promtool", ["check", "metrics"], input: text)
        } catch {
            Issue.record("promtool check metrics: \(error)")
        }
    }

    static func confirmation(_ name: String, namespace: String, id: String, to: String) throws -> Message {
        var message = Message(type: .chat, to: try JID(to))
        var element = XMLElement(name: name, namespace: namespace)
        element[attribute: "id"] = id
        message.extensions.append(element)
        return message
    }

    private func waitForState(_ state: String, id: String, http: HTTPTestClient) async throws -> [String: Any]? {
        var last: [String: Any]?
        _ = try await eventually(timeout: .seconds(10)) {
            last = try await http.get("/messages/\(id)", token: Self.token).json
            return last?["state"] as? String == state
        }
        return last
    }
}
