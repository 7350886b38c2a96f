import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

/// What contrib/ gives Prometheus and Grafana users (issue 42), against a running daemon:
/// Debian's Prometheus scrapes `xmpp-bridge run` (the state in PostgreSQL, so the lease
/// metrics are there) and loads `contrib/prometheus/xmpp-bridge.rules.yml`. Every rule is
/// evaluated by it without an error, every expression of `contrib/grafana/xmpp-bridge.json`
/// is a query it answers, and every metric each of them names is among what it scraped: a
/// renamed metric fails here, not on a user's dashboard.
@Suite(
    "dashboard and alert rules against a scraped daemon", .onTestBodyThreads, .serialized,
    .enabled(if: IntegrationEnvironment.enabled && IntegrationEnvironment.postgresEnabled), .timeLimit(.minutes(3))
)
struct MonitoringIntegrationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Prometheus's answer to an instant query: status and result.
    static func query(_ api: HTTPTestClient, _ expression: String) async throws -> (status: String, result: [[String: Any]], error: String?) {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        let reply = try await api.get("/api/v1/query?query=\(encoded)")
        let json = reply.json ?? [:]
        let data = json["data"] as? [String: Any]
        return (json["status"] as? String ?? "\(reply.status)", data?["result"] as? [[String: Any]] ?? [], json["error"] as? String)
    }

    /// The metric names an expression reads (a histogram's `_bucket` series by its own name).
    static func metricNames(in expression: String) -> Set<String> {
        Set(expression.matches(of: /xmpp_bridge_[a-z_]+/).map { String($0.output) })
    }

    /// Every panel's queries in the dashboard, and its template variables' queries
    /// (Grafana's `label_values(METRIC, LABEL)`).
    static func dashboardExpressions() throws -> (panels: [(panel: String, expression: String)], variables: [String]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(self.repository)/contrib/grafana/xmpp-bridge.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        var expressions: [(String, String)] = []
        for panel in panels {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                expressions.append((panel["title"] as? String ?? "?", try #require(target["expr"] as? String)))
            }
        }
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["definition"] as? String }
        return (expressions, variables)
    }

    @Test("Prometheus scrapes the daemon and evaluates every alert rule without an error; every dashboard query is answered; every metric they name is scraped")
    func everyExpression() async throws {
        guard PrometheusServer.missingPrerequisites().isEmpty else {
            if IntegrationEnvironment.isCI { throw TestFailure("prometheus is missing (apt-get install prometheus)") }
            print("prometheus not installed: the dashboard and rules are not checked against a scrape")
            return
        }
        let server = try await ProsodyServer.started(accounts: DaemonScenario.users("bob", "home"))
        defer { server.shutdown() }
        let database = try await SharedPostgres.freshDatabase()
        let ports = try ProsodyServer.freeLoopbackPorts(count: 2)
        let config = try BridgeConfigFile.write(
            accounts: [("home", "home", server)], in: server.directory,
            rest: """
                [local.web]
                kind = "http"
                listen = "127.0.0.1:\(ports[0])"

                [channels.alerts]
                format = "{body}"
                members = [ { local = "web" }, { account = "home", jid = "bob@example.test", direction = "out" } ]

                [channels.oncall]
                format = "{body}"
                members = [ { local = "web", direction = "in" }, { account = "home", jid = "bob@example.test", direction = "out" } ]
                ack = ["reply", "reaction"]
                """
        )
        try BridgeConfigFile.onPostgres(config, url: database.url, instance: "node-a", ttl: 3, bridge: "metrics_listen = \"127.0.0.1:\(ports[1])\"\n")
        let bridge = try BridgeDaemon.start(config: config, in: server.directory, environment: ["BRIDGE_DB_PASSWORD": database.password])
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        // A request, so that the HTTP ingress's counter has a series as it has in use.
        #expect(try await HTTPTestClient(target: .tcp(port: ports[0])).post("/channels/alerts", body: "scraped").status == 202)

        let rules = "\(Self.repository)/contrib/prometheus/xmpp-bridge.rules.yml"
        let prometheus = try await Subprocess.offThread { try PrometheusServer.start(targets: ["127.0.0.1:\(ports[1])"], ruleFiles: [rules]) }
        defer { prometheus.shutdown() }
        let api = HTTPTestClient(target: .tcp(port: prometheus.port))
        // Scraped once the lease gauges are in (the daemon took its lease first), and every
        // rule evaluated at least once since.
        let scraped = await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
            (try? await Self.query(api, "xmpp_bridge_leases_held").result.isEmpty == false) ?? false
        }
        #expect(scraped, "Prometheus never scraped the lease gauges; its log:\n\(prometheus.log.suffix(3000))\nbridge:\n\(bridge.run.errors.suffix(3000))")
        let alerts = try String(contentsOfFile: rules, encoding: .utf8).matches(of: #/\n\s*- alert: /#).count
        let loaded = try await eventuallyValue(timeout: .seconds(30), every: .milliseconds(200)) { () -> [[String: Any]]? in
            let json = try await api.get("/api/v1/rules").json
            let groups = (json?["data"] as? [String: Any])?["groups"] as? [[String: Any]] ?? []
            let rules = groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }
            let evaluated = rules.allSatisfy { ($0["lastEvaluation"] as? String).map { !$0.hasPrefix("0001-") } ?? false }
            return rules.count == alerts && evaluated ? rules : nil
        }
        let evaluatedRules = try #require(loaded, "Prometheus did not load and evaluate the \(alerts) rules; its log:\n\(prometheus.log.suffix(3000))")
        #expect(alerts >= 4)

        // What the daemon exports, as Prometheus has it.
        let scrapedNames = Set(
            try await Self.query(api, #"count by (__name__) ({__name__=~"xmpp_bridge_.+"})"#).result.compactMap { ($0["metric"] as? [String: Any])?["__name__"] as? String }
        )
        for rule in evaluatedRules {
            let name = rule["name"] as? String ?? "?"
            let expression = rule["query"] as? String ?? ""
            #expect(rule["health"] as? String == "ok", "rule \(name): \(rule["lastError"] ?? "")")
            let unknown = Self.metricNames(in: expression).subtracting(scrapedNames).filter { !scrapedNames.contains($0 + "_bucket") }
            #expect(unknown.isEmpty, "rule \(name) names \(unknown.sorted()), not scraped (scraped: \(scrapedNames.sorted()))")
        }
        // A rate needs two samples in its window: three scrapes in, it has them.
        let samples = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
            let answer = try? await Self.query(api, "count_over_time(xmpp_bridge_ready[1m])")
            return (answer?.result.first?["value"] as? [Any])?.last.flatMap { Double("\($0)") }.map { $0 >= 3 } ?? false
        }
        #expect(samples, "Prometheus did not scrape three times; its log:\n\(prometheus.log.suffix(3000))")
        let dashboard = try Self.dashboardExpressions()
        #expect(dashboard.panels.count >= 20)
        for (panel, expression) in dashboard.panels {
            let concrete = expression.replacingOccurrences(of: "$__rate_interval", with: "1m").replacingOccurrences(of: "$instance", with: ".*")
            let answer = try await Self.query(api, concrete)
            #expect(answer.status == "success", "panel \(panel): \(expression): \(answer.error ?? "")")
            let unknown = Self.metricNames(in: concrete).subtracting(scrapedNames)
            #expect(unknown.isEmpty, "panel \(panel) names \(unknown.sorted()), not scraped (scraped: \(scrapedNames.sorted()))")
            // Every series a panel shows exists from the start (counters at 0), so an empty
            // answer is a selector that matches nothing: a wrong label or value.
            #expect(!answer.result.isEmpty, "panel \(panel): \(expression) matches no series")
        }
        #expect(!dashboard.variables.isEmpty)
        for variable in dashboard.variables {
            let unknown = Self.metricNames(in: variable).subtracting(scrapedNames)
            #expect(unknown.isEmpty, "template variable \(variable) names \(unknown.sorted()), not scraped")
        }
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
    }
}
