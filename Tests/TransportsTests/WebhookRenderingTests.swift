import Foundation
import TestSupport
import Testing
import TransportCore

@testable import HTTPIngress

/// Alertmanager and Grafana webhooks as template contexts, and their text through the
/// default and custom Mustache templates (plain text: nothing is HTML-escaped).
@Suite("Webhook payloads and templates")
struct WebhookRenderingTests {
    static func payload(_ text: String) throws -> WebhookPayload {
        try WebhookPayload(json: Array(text.utf8))
    }

    static func problem(_ bytes: [UInt8]) -> WebhookPayload.Problem? {
        do {
            _ = try WebhookPayload(json: bytes)
            return nil
        } catch {
            return error
        }
    }

    static func problem(_ text: String) -> WebhookPayload.Problem? { Self.problem(Array(text.utf8)) }

    // MARK: - The default template on the samples

    @Test("Alertmanager, two alerts firing: a counted status line, one line per alert, the link")
    func alertmanagerFiring() throws {
        let payload = try Self.payload(WebhookSamples.alertmanagerFiring)
        #expect(payload.alertCount == 2)
        #expect(
            WebhookTemplate.standard.render(payload) == """
                🔥 FIRING (2)
                • InstanceDown: db1:9100 has been down for more than 5 minutes [instance=db1:9100, job=node, severity=page]
                • InstanceDown: web2:9100 has been down for more than 5 minutes [instance=web2:9100, job=node, severity=page]
                http://alertmanager.example:9093
                """
        )
    }

    @Test("Alertmanager, one alert resolved")
    func alertmanagerResolved() throws {
        let payload = try Self.payload(WebhookSamples.alertmanagerResolved)
        #expect(payload.alertCount == 1)
        #expect(
            WebhookTemplate.standard.render(payload) == """
                ✅ RESOLVED
                • DiskFull: Disk on db1 over 90% [instance=db1:9100, severity=warning]
                http://alertmanager.example:9093
                """
        )
    }

    @Test("Grafana, one alert firing: the summary annotation wins over description")
    func grafanaFiring() throws {
        let payload = try Self.payload(WebhookSamples.grafanaFiring)
        #expect(payload.alertCount == 1)
        #expect(
            WebhookTemplate.standard.render(payload) == """
                🔥 FIRING
                • High memory usage: This alert was triggered for zone us-1 [team=blue, zone=us-1]
                https://grafana.example/
                """
        )
    }

    @Test("the default template parses from its text to the same output as .standard")
    func defaultTextParses() throws {
        let parsed = try WebhookTemplate(WebhookTemplate.defaultText)
        let payload = try Self.payload(WebhookSamples.alertmanagerFiring)
        #expect(parsed.render(payload) == WebhookTemplate.standard.render(payload))
    }

    @Test("firing and resolved alerts of one group share one message")
    func mixed() throws {
        let payload = try Self.payload(
            """
            {"alerts": [
              {"status": "firing", "labels": {"alertname": "A"}},
              {"status": "resolved", "labels": {"alertname": "B", "zone": "z"}, "annotations": {"description": "gone"}},
              {"status": "firing", "labels": {"alertname": "C"}, "annotations": {"summary": "", "message": "from message"}}
            ]}
            """
        )
        #expect(payload.alertCount == 3)
        #expect(
            WebhookTemplate.standard.render(payload) == """
                🔥 FIRING (2)
                • A
                • C: from message
                ✅ RESOLVED (1)
                • B: gone [zone=z]
                """
        )
    }

    @Test("an alert without labels is called 'alert'; status is compared without case")
    func fallbacks() throws {
        let payload = try Self.payload(#"{"alerts": [{"status": "RESOLVED"}]}"#)
        #expect(WebhookTemplate.standard.render(payload) == "✅ RESOLVED\n• alert")
    }

    // MARK: - Context

    @Test("the context adds firing, resolved, counts, link, and per alert name, summary, labelText, url")
    func context() throws {
        let payload = try Self.payload(WebhookSamples.grafanaFiring)
        let context = payload.context
        #expect(context["hasFiring"] as? Bool == true)
        #expect(context["hasResolved"] as? Bool == false)
        #expect(context["firingCount"] as? Int == 1)
        #expect(context["resolvedCount"] as? Int == 0)
        #expect(context["multiple"] as? Bool == false)
        #expect(context["link"] as? String == "https://grafana.example/")
        #expect(context["title"] as? String == "[FIRING:1]  (blue)")
        #expect(context["orgId"] as? Int == 1)
        let alert = try #require((context["firing"] as? [[String: Any]])?.first)
        #expect(alert["name"] as? String == "High memory usage")
        #expect(alert["summary"] as? String == "This alert was triggered for zone us-1")
        #expect(alert["labelText"] as? String == "team=blue, zone=us-1")
        // panelURL and dashboardURL are empty: the generator's URL is the one.
        #expect(alert["url"] as? String == "https://grafana.example/alerting/1afz29v7z/edit")
        let values = try #require(alert["values"] as? [String: Any])
        #expect(values["B"] as? Double == 44.23943737541908)
        #expect(values["C"] as? Int == 1)
    }

    @Test("null fields are absent; an empty externalURL gives no link")
    func nulls() throws {
        let payload = try Self.payload(#"{"externalURL": "", "receiver": null, "alerts": [{"labels": {"alertname": "X"}, "panelURL": "p"}]}"#)
        #expect(payload.context["link"] == nil)
        #expect(payload.context.keys.contains("receiver") == false)
        let alert = try #require((payload.context["firing"] as? [[String: Any]])?.first)
        #expect(alert["url"] as? String == "p")
        #expect(alert["labelText"] == nil)
    }

    // MARK: - Custom templates

    @Test("a custom template reaches the payload's own fields with dotted names and sections")
    func customTemplate() throws {
        let template = try WebhookTemplate("[{{commonLabels.severity}}] {{status}}: {{#alerts}}{{labels.instance}} {{/alerts}}")
        let payload = try Self.payload(WebhookSamples.alertmanagerFiring)
        #expect(template.render(payload) == "[page] firing: db1:9100 web2:9100")
        let grafana = try WebhookTemplate("{{title}} {{#commonLabels}}team {{team}}{{/commonLabels}}{{^hasResolved}}, nothing resolved{{/hasResolved}}")
        #expect(grafana.render(try Self.payload(WebhookSamples.grafanaFiring)) == "[FIRING:1]  (blue) team blue, nothing resolved")
    }

    @Test("a custom template renders the helper fields of firing and resolved alerts")
    func customHelpers() throws {
        let payload = try Self.payload(WebhookSamples.alertmanagerResolved)
        let template = try WebhookTemplate("{{#resolved}}{{name}}={{status}} ({{url}}){{/resolved}} {{firingCount}}/{{resolvedCount}}")
        #expect(template.render(payload) == "DiskFull=resolved (http://prometheus.example:9090/graph?g0.expr=disk) 0/1")
    }

    @Test("contrib/alerts.mustache renders every sample as the built-in default does")
    func contribTemplate() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../contrib/alerts.mustache").path
        let template = try WebhookTemplate(try String(contentsOfFile: file, encoding: .utf8))
        for sample in [WebhookSamples.alertmanagerFiring, WebhookSamples.alertmanagerResolved, WebhookSamples.grafanaFiring] {
            let payload = try Self.payload(sample)
            #expect(template.render(payload) == WebhookTemplate.standard.render(payload))
        }
    }

    @Test("nothing is HTML-escaped: < & > \" ' come out as sent")
    func noEscaping() throws {
        let payload = try Self.payload(
            #"{"alerts": [{"labels": {"alertname": "A<&>\"'", "q": "x&y"}, "annotations": {"summary": "<b>bold</b> & \"quoted\" 'single'"}}]}"#
        )
        #expect(WebhookTemplate.standard.render(payload) == #"🔥 FIRING"# + "\n" + #"• A<&>"': <b>bold</b> & "quoted" 'single' [q=x&y]"#)
        let custom = try WebhookTemplate("{{#firing}}{{summary}}|{{{summary}}}|{{&summary}}{{/firing}}")
        let same = #"<b>bold</b> & "quoted" 'single'"#
        #expect(custom.render(payload) == "\(same)|\(same)|\(same)")
    }

    @Test("rendered text is trimmed of blank lines at both ends")
    func trimmed() throws {
        let template = try WebhookTemplate("\n\n  {{receiver}}  \n\n")
        #expect(template.render(try Self.payload(WebhookSamples.alertmanagerFiring)) == "xmpp")
    }

    @Test(
        "an invalid template throws Invalid",
        arguments: ["{{#alerts}}unclosed", "{{/alerts}}", "{{#a}}{{/b}}", "{{unterminated", "{{#a}}{{#b}}{{/a}}{{/b}}"]
    )
    func invalidTemplate(text: String) {
        #expect(throws: WebhookTemplate.Invalid.self) { try WebhookTemplate(text) }
        do {
            _ = try WebhookTemplate(text)
        } catch {
            #expect(error.description.hasPrefix("not a valid Mustache template: "))
        }
    }

    // MARK: - Refused payloads

    @Test("malformed JSON is .malformed", arguments: ["{", "", "not json", #"{"alerts": [}"#, #"{"a":1}}"#, #"{'alerts': []}"#])
    func malformed(text: String) {
        guard case .malformed = Self.problem(text) else {
            Issue.record("expected .malformed for \(text), got \(String(describing: Self.problem(text)))")
            return
        }
    }

    @Test("bytes that are not UTF-8 are .malformed")
    func notUTF8() {
        guard case .malformed = Self.problem([0x7B, 0xFF, 0x7D]) else {
            Issue.record("expected .malformed")
            return
        }
    }

    @Test(
        "JSON that is not such a webhook is .unexpected with the reason",
        arguments: [
            ("[1, 2]", "the body is not a JSON object"),
            ("[]", "the body is not a JSON object"),
            (#""alerts""#, "the body is not a JSON object"),
            ("42", "the body is not a JSON object"),
            ("null", "the body is not a JSON object"),
            (#"{"status": "firing"}"#, #"no "alerts" array: not an Alertmanager or Grafana webhook"#),
            (#"{"alerts": {"a": 1}}"#, #"no "alerts" array: not an Alertmanager or Grafana webhook"#),
            (#"{"alerts": "many"}"#, #"no "alerts" array: not an Alertmanager or Grafana webhook"#),
            (#"{"alerts": null}"#, #"no "alerts" array: not an Alertmanager or Grafana webhook"#),
            (#"{"alerts": []}"#, #""alerts" holds no alert objects"#),
            (#"{"alerts": [1, "x", [], null, true]}"#, #""alerts" holds no alert objects"#),
        ]
    )
    func unexpected(text: String, reason: String) {
        #expect(Self.problem(text) == .unexpected(reason))
        #expect(Self.problem(text)?.description == reason)
    }

    @Test("alerts that are not objects are skipped when some are")
    func mixedAlertEntries() throws {
        let payload = try Self.payload(#"{"alerts": [1, {"labels": {"alertname": "Real"}}, "x"]}"#)
        #expect(payload.alertCount == 1)
        #expect(WebhookTemplate.standard.render(payload) == "🔥 FIRING\n• Real")
    }

    @Test("deeply nested JSON is refused, not a stack overflow", arguments: [600, 10_000, 100_000])
    func deeplyNested(depth: Int) {
        let arrays = Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth)
        guard case .malformed = Self.problem(arrays) else {
            Issue.record("nested arrays \(depth) deep: expected .malformed")
            return
        }
        var objects = Array(#"{"alerts":"#.utf8)
        for _ in 0..<depth { objects += Array(#"{"a":"#.utf8) }
        objects += Array("1".utf8) + Array(repeating: UInt8(ascii: "}"), count: depth + 1)
        guard case .malformed = Self.problem(objects) else {
            Issue.record("nested objects \(depth) deep: expected .malformed")
            return
        }
    }

    @Test("problems describe themselves for the 400/422 body")
    func problemDescriptions() {
        #expect(WebhookPayload.Problem.malformed("x").description == "bad JSON: x")
        #expect(WebhookPayload.Problem.unexpected("y").description == "y")
    }
}

/// What a webhook says about its alerts (issue 24): the identity two replicas share, the
/// group's thread, the matchers of a silence.
@Suite("Webhook notification identity")
struct WebhookNotificationTests {
    static func notification(_ text: String, kind: IngressRoute.WebhookKind) throws -> AlertNotification? {
        try WebhookPayload(json: Array(text.utf8)).notification(kind: kind)
    }

    @Test("Alertmanager: groupKey, status and fingerprints make the key; the common labels and severity come along; RESOLVED shares FIRING's thread only within its group")
    func alertmanager() throws {
        let firing = try #require(try Self.notification(WebhookSamples.alertmanagerFiring, kind: .alertmanager))
        #expect(firing.group == #"{}:{alertname="InstanceDown"}"#)
        #expect(firing.alerts == ["0718a1b2c3d4e5f6", "a1b2c3d4e5f60718"])
        #expect(firing.commonLabels == ["alertname": "InstanceDown", "job": "node", "severity": "page"])
        #expect(firing.severity == "page" && !firing.isResolved)
        // A replica renders other times but sends the same identity.
        let replica = WebhookSamples.alertmanagerFiring.replacingOccurrences(of: "\"startsAt\"", with: "\"ignored\": 1, \"startsAt\"")
        #expect(try Self.notification(replica, kind: .alertmanager)?.deduplicationKey == firing.deduplicationKey)
        let resolved = try #require(try Self.notification(WebhookSamples.alertmanagerResolved, kind: .alertmanager))
        #expect(resolved.isResolved && resolved.threadKey != firing.threadKey)
        let sameGroupResolved = WebhookSamples.alertmanagerFiring.replacingOccurrences(of: "\"status\": \"firing\"", with: "\"status\": \"resolved\"")
        let closing = try #require(try Self.notification(sameGroupResolved, kind: .alertmanager))
        #expect(closing.threadKey == firing.threadKey && closing.deduplicationKey != firing.deduplicationKey)
        #expect(try Self.notification(#"{"alerts":[{"status":"firing","labels":{"a":"b"}}]}"#, kind: .alertmanager) == nil)
    }

    @Test("Grafana: grouped by its rule uid, from the label or the generator URL")
    func grafana() throws {
        let firing = try #require(try Self.notification(WebhookSamples.grafanaFiring, kind: .grafana))
        #expect(firing.kind == "grafana" && firing.group == "1afz29v7z")
        let labelled = #"{"status":"firing","alerts":[{"status":"firing","labels":{"__alert_rule_uid__":"r9","severity":"critical"},"generatorURL":"http://g/alerting/grafana/zz/view"}]}"#
        let byLabel = try #require(try Self.notification(labelled, kind: .grafana))
        #expect(byLabel.group == "r9" && byLabel.severity == "critical")
        let byURL = #"{"status":"firing","alerts":[{"status":"firing","labels":{},"generatorURL":"http://g/alerting/grafana/zz/view?x=1"}]}"#
        #expect(try Self.notification(byURL, kind: .grafana)?.group == "zz")
    }
}
