import Foundation
import Logging
import NIOConcurrencyHelpers
import TestSupport
import Testing
import TransportCore

@testable import HTTPIngress

/// The HTTP ingress's answers once a request is routed, authorised and read (no sockets):
/// what the bridge is handed, and the status for every outcome of `handle` and of
/// `?wait=sent`.
@Suite("IngressResponder")
struct IngressResponderTests {
    /// Records every message handed over and answers with a fixed outcome; with a gate,
    /// holds `handle` until the test opens it.
    final class FakeHandler: TransportEventHandler {
        let outcome: TransportEventOutcome
        let messages = NIOLockedValueBox<[InboundMessage]>([])
        let log: NIOLockedValueBox<[String]>
        let gate: AsyncStream<Void>?
        let entered: AsyncStream<Void>.Continuation?

        init(outcome: TransportEventOutcome = .accepted, log: NIOLockedValueBox<[String]> = .init([]), gate: AsyncStream<Void>? = nil,
             entered: AsyncStream<Void>.Continuation? = nil) {
            self.outcome = outcome
            self.log = log
            self.gate = gate
            self.entered = entered
        }

        func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
            guard case .message(let message) = event else { return .dropped("not a message") }
            self.messages.withLockedValue { $0.append(message) }
            self.log.withLockedValue { $0.append("handle entered") }
            self.entered?.yield()
            if let gate { for await _ in gate { break } }
            self.log.withLockedValue { $0.append("handle returned") }
            return self.outcome
        }
    }

    /// Answers status questions from a table; records what `waitUntilSent` was asked.
    final class FakeStatus: DeliveryStatusProviding {
        let known: [String: MessageDeliveryStatus]
        let afterWait: MessageDeliveryStatus?
        let waits = NIOLockedValueBox<[(id: String, source: String, timeout: Duration)]>([])

        init(known: [String: MessageDeliveryStatus] = [:], afterWait: MessageDeliveryStatus? = nil) {
            self.known = known
            self.afterWait = afterWait
        }

        func status(ofMessage id: String, from source: String) async -> MessageDeliveryStatus? {
            source == "web" ? self.known[id] : nil
        }

        func waitUntilSent(message id: String, from source: String, timeout: Duration) async -> MessageDeliveryStatus? {
            self.waits.withLockedValue { $0.append((id, source, timeout)) }
            return self.afterWait
        }
    }

    static func responder(
        _ handler: FakeHandler, status: FakeStatus? = nil, templates: [String: WebhookTemplate] = [:]
    ) -> IngressResponder {
        let counter = NIOLockedValueBox(0)
        return IngressResponder(
            name: "web", nick: "curl", waitTimeout: .seconds(30), handler: handler, status: status, channels: { ["alerts", "ops"] },
            template: { templates[$0] }, makeID: { "web-\(counter.withLockedValue { $0 += 1; return $0 })" },
            logger: Logger(label: "ingress-responder-test")
        )
    }

    static func headers(_ fields: [String: String]) -> (String) -> String? {
        let lowered = Dictionary(uniqueKeysWithValues: fields.map { ($0.key.lowercased(), $0.value) })
        return { lowered[$0.lowercased()] }
    }

    static func post(
        _ responder: IngressResponder, _ route: IngressRoute, _ body: String, query: [String: String] = [:], headers: [String: String] = [:]
    ) async -> IngressResponder.Answer {
        await responder.respond(to: route, query: query, header: Self.headers(headers), body: Array(body.utf8))
    }

    static let sent = MessageDeliveryStatus(
        id: "web-1", channel: "alerts", state: .sent, targets: [.init(target: "work:alice@example.org", state: .sent)]
    )

    // MARK: - Messages

    @Test("a text message is handed over with every field, and answered 202 with its id")
    func accepted() async {
        let handler = FakeHandler()
        let answer = await Self.post(Self.responder(handler), .message(channel: "alerts"), "disk full", headers: ["Title": "db1", "X-Type": "headline"])
        #expect(answer == .init(status: 202, json: #"{"channel":"alerts","id":"web-1","status":"queued"}"#))
        let messages = handler.messages.withLockedValue { $0 }
        #expect(messages.count == 1)
        let message = messages.first
        #expect(message?.source == Endpoint(transport: "web"))
        #expect(message?.sender == "curl")
        #expect(message?.nick == "curl")
        #expect(message?.id == "web-1")
        #expect(message?.body == "disk full")
        #expect(message?.subject == "db1")
        #expect(message?.channel == "alerts")
        #expect(message?.requestedType == .headline)
        #expect(message?.awaitsCommit == true)
        #expect(message?.deduplicationKey == nil)
        #expect(message?.deliverToSourceTransport == false)
    }

    @Test("each request without a key gets a new id")
    func newIDs() async {
        let handler = FakeHandler()
        let responder = Self.responder(handler)
        _ = await Self.post(responder, .message(channel: "alerts"), "one")
        let second = await Self.post(responder, .message(channel: "ops"), "two")
        #expect(second.json == #"{"channel":"ops","id":"web-2","status":"queued"}"#)
        #expect(handler.messages.withLockedValue { $0.map(\.id) } == ["web-1", "web-2"])
    }

    @Test("an Idempotency-Key gives the id NAME-key-K and the deduplication key idempotency-key:K")
    func idempotencyKey() async {
        let handler = FakeHandler()
        let answer = await Self.post(Self.responder(handler), .message(channel: "alerts"), "x", headers: ["Idempotency-Key": "K.1"])
        #expect(answer == .init(status: 202, json: #"{"channel":"alerts","id":"web-key-K.1","status":"queued"}"#))
        let message = handler.messages.withLockedValue { $0.first }
        #expect(message?.id == "web-key-K.1")
        #expect(message?.deduplicationKey == "idempotency-key:K.1")
    }

    @Test("202 is answered only once handle has returned (the durable commit)")
    func answerAfterCommit() async {
        let log = NIOLockedValueBox<[String]>([])
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        let handler = FakeHandler(log: log, gate: gate, entered: enter)
        let responder = Self.responder(handler)
        let request = Task {
            let answer = await Self.post(responder, .message(channel: "alerts"), "x")
            log.withLockedValue { $0.append("answered") }
            return answer
        }
        for await _ in entered { break }
        // Give a responder that did not wait every chance to answer early.
        for _ in 0..<1_000 { await Task.yield() }
        #expect(log.withLockedValue { $0 } == ["handle entered"])
        open.yield()
        let answer = await request.value
        #expect(answer.status == 202)
        #expect(log.withLockedValue { $0 } == ["handle entered", "handle returned", "answered"])
    }

    @Test("a JSON message is handed over with its fields")
    func jsonMessage() async {
        let handler = FakeHandler()
        let answer = await Self.post(
            Self.responder(handler), .message(channel: "ops"), #"{"body":"b","subject":"s","type":"normal"}"#, headers: ["Content-Type": "application/json"]
        )
        #expect(answer.status == 202)
        let message = handler.messages.withLockedValue { $0.first }
        #expect(message?.body == "b")
        #expect(message?.subject == "s")
        #expect(message?.requestedType == .normal)
    }

    @Test("an unknown channel is 404 and hands nothing over")
    func unknownChannel() async {
        let handler = FakeHandler()
        let responder = Self.responder(handler)
        #expect(await Self.post(responder, .message(channel: "nope"), "x") == .init(status: 404, json: #"{"error":"unknown channel 'nope'"}"#))
        #expect(
            await Self.post(responder, .webhook(channel: "nope", kind: .grafana), WebhookSamples.grafanaFiring)
                == .init(status: 404, json: #"{"error":"unknown channel 'nope'"}"#)
        )
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    @Test("a refused submission is answered with its error and hands nothing over")
    func refusedSubmission() async {
        let handler = FakeHandler()
        let responder = Self.responder(handler)
        #expect(await Self.post(responder, .message(channel: "alerts"), " ") == .init(status: 422, json: #"{"error":"empty message"}"#))
        #expect(await Self.post(responder, .message(channel: "alerts"), "x", headers: ["Content-Type": "image/png"]).status == 415)
        #expect(await Self.post(responder, .message(channel: "alerts"), "{", headers: ["Content-Type": "application/json"]).status == 400)
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    // MARK: - Outcomes

    @Test("a repeat already handled is 200 duplicate under the same id")
    func duplicate() async {
        let answer = await Self.post(
            Self.responder(FakeHandler(outcome: .dropped("already handled"))), .message(channel: "alerts"), "x", headers: ["Idempotency-Key": "K"]
        )
        #expect(answer == .init(status: 200, json: #"{"channel":"alerts","id":"web-key-K","status":"duplicate"}"#))
    }

    @Test("a state database error is 503: not committed, try again")
    func databaseError() async {
        let answer = await Self.post(Self.responder(FakeHandler(outcome: .dropped("state database error"))), .message(channel: "alerts"), "x")
        #expect(answer == .init(status: 503, json: #"{"error":"not committed (state database error); try again"}"#))
    }

    @Test("an HA replica's copy of a notification is 202 with the first request's id; one whose first copy is being committed is 503 (issue 24)")
    func notificationCopies() async {
        let json = ["Content-Type": "application/json"]
        let copy = await Self.post(Self.responder(FakeHandler(outcome: .duplicate(of: "web-7"))), .webhook(channel: "alerts", kind: .alertmanager), WebhookSamples.alertmanagerFiring, headers: json)
        #expect(copy == .init(status: 202, json: #"{"channel":"alerts","id":"web-7","status":"queued"}"#))
        let pending = await Self.post(
            Self.responder(FakeHandler(outcome: .dropped("the same notification is being committed"))), .webhook(channel: "alerts", kind: .alertmanager),
            WebhookSamples.alertmanagerFiring, headers: json
        )
        #expect(pending == .init(status: 503, json: #"{"error":"the same notification is being committed; try again"}"#))
    }

    @Test("a webhook carries its notification (group, status, fingerprints, common labels) and the priority of ?priority=; a bad one is 422")
    func webhookNotification() async throws {
        let handler = FakeHandler()
        let json = ["Content-Type": "application/json"]
        _ = await Self.post(Self.responder(handler), .webhook(channel: "alerts", kind: .alertmanager), WebhookSamples.alertmanagerFiring, query: ["priority": "4"], headers: json)
        let message = try #require(handler.messages.withLockedValue { $0.first })
        #expect(message.priority == 4)
        #expect(message.notification?.group == #"{}:{alertname="InstanceDown"}"# && message.notification?.alerts.count == 2)
        let bad = await Self.post(Self.responder(FakeHandler()), .webhook(channel: "alerts", kind: .alertmanager), WebhookSamples.alertmanagerFiring, query: ["priority": "9"], headers: json)
        #expect(bad.status == 422)
    }

    @Test("any other drop is 422 with the reason")
    func otherDrop() async {
        let answer = await Self.post(Self.responder(FakeHandler(outcome: .dropped("no member may receive"))), .message(channel: "alerts"), "x")
        #expect(answer == .init(status: 422, json: #"{"error":"not relayed: no member may receive"}"#))
    }

    // MARK: - Webhooks

    @Test("a webhook without a channel template renders through the default")
    func webhookDefault() async throws {
        let handler = FakeHandler()
        let answer = await Self.post(
            Self.responder(handler), .webhook(channel: "alerts", kind: .alertmanager), WebhookSamples.alertmanagerResolved,
            headers: ["Content-Type": "application/json"]
        )
        #expect(answer == .init(status: 202, json: #"{"channel":"alerts","id":"web-1","status":"queued"}"#))
        let message = try #require(handler.messages.withLockedValue { $0.first })
        #expect(message.body == "✅ RESOLVED\n• DiskFull: Disk on db1 over 90% [instance=db1:9100, severity=warning]\nhttp://alertmanager.example:9093")
        #expect(message.subject == nil)
        #expect(message.requestedType == nil)
        #expect(message.channel == "alerts")
        #expect(message.awaitsCommit == true)
    }

    @Test("a webhook renders through its channel's template; other channels keep the default")
    func webhookCustom() async throws {
        let handler = FakeHandler()
        let responder = Self.responder(handler, templates: ["ops": try WebhookTemplate("{{status}} <{{commonLabels.severity}}> {{firingCount}}")])
        #expect(await Self.post(responder, .webhook(channel: "ops", kind: .alertmanager), WebhookSamples.alertmanagerFiring).status == 202)
        #expect(await Self.post(responder, .webhook(channel: "alerts", kind: .grafana), WebhookSamples.grafanaFiring).status == 202)
        let bodies = handler.messages.withLockedValue { $0.map(\.body) }
        #expect(bodies == ["firing <page> 2", "🔥 FIRING\n• High memory usage: This alert was triggered for zone us-1 [team=blue, zone=us-1]\nhttps://grafana.example/"])
    }

    @Test("a webhook whose template renders nothing is 422")
    func webhookEmpty() async throws {
        let handler = FakeHandler()
        let responder = Self.responder(handler, templates: ["ops": try WebhookTemplate("{{#hasResolved}}resolved{{/hasResolved}}  \n")])
        let answer = await Self.post(responder, .webhook(channel: "ops", kind: .grafana), WebhookSamples.grafanaFiring)
        #expect(answer == .init(status: 422, json: #"{"error":"the channel's template rendered nothing for this grafana payload"}"#))
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    @Test("webhook refusals: 400 malformed, 422 unexpected, 415 content type, 400 bad key")
    func webhookRefusals() async {
        let handler = FakeHandler()
        let responder = Self.responder(handler)
        let route = IngressRoute.webhook(channel: "alerts", kind: .alertmanager)
        #expect(await Self.post(responder, route, "{").status == 400)
        #expect(await Self.post(responder, route, "{").json.hasPrefix(#"{"error":"bad JSON: "#))
        #expect(
            await Self.post(responder, route, #"{"status":"firing"}"#)
                == .init(status: 422, json: #"{"error":"no \"alerts\" array: not an Alertmanager or Grafana webhook"}"#)
        )
        #expect(await Self.post(responder, route, WebhookSamples.alertmanagerFiring, headers: ["Content-Type": "multipart/form-data; boundary=x"]).status == 415)
        #expect(await Self.post(responder, route, WebhookSamples.alertmanagerFiring, headers: ["Idempotency-Key": "a b"]).status == 400)
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    @Test("a webhook with an Idempotency-Key is relayed under NAME-key-K")
    func webhookKey() async {
        let handler = FakeHandler()
        let answer = await Self.post(
            Self.responder(handler), .webhook(channel: "alerts", kind: .alertmanager), WebhookSamples.alertmanagerFiring,
            headers: ["Idempotency-Key": "am:a1b2"]
        )
        #expect(answer.json == #"{"channel":"alerts","id":"web-key-am:a1b2","status":"queued"}"#)
        #expect(handler.messages.withLockedValue { $0.first?.deduplicationKey } == "idempotency-key:am:a1b2")
    }

    // MARK: - ?wait=sent

    @Test("wait=sent answers 200 with the status once sent, waiting at most wait_timeout")
    func waitSent() async {
        let status = FakeStatus(afterWait: Self.sent)
        let answer = await Self.post(Self.responder(FakeHandler(), status: status), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(answer == .init(status: 200, json: #"{"channel":"alerts","id":"web-1","state":"sent","targets":[{"state":"sent","target":"work:alice@example.org"}]}"#))
        let waits = status.waits.withLockedValue { $0 }
        #expect(waits.map(\.id) == ["web-1"])
        #expect(waits.map(\.source) == ["web"])
        #expect(waits.map(\.timeout) == [.seconds(30)])
    }

    @Test("received and displayed are 200 too", arguments: [MessageDeliveryStatus.State.received, .displayed])
    func waitBeyondSent(state: MessageDeliveryStatus.State) async {
        var found = Self.sent
        found.state = state
        let answer = await Self.post(Self.responder(FakeHandler(), status: FakeStatus(afterWait: found)), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(answer.status == 200)
    }

    @Test("still queued when the wait ends is 202")
    func waitQueued() async {
        var queued = Self.sent
        queued.state = .queued
        queued.targets[0].state = .queued
        let answer = await Self.post(Self.responder(FakeHandler(), status: FakeStatus(afterWait: queued)), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(answer == .init(status: 202, json: #"{"channel":"alerts","id":"web-1","state":"queued","targets":[{"state":"queued","target":"work:alice@example.org"}]}"#))
        // No record at all once the wait ends: 202 queued as without wait.
        let none = await Self.post(Self.responder(FakeHandler(), status: FakeStatus(afterWait: nil)), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(none == .init(status: 202, json: #"{"channel":"alerts","id":"web-1","status":"queued"}"#))
    }

    @Test("failed is 502 with the error")
    func waitFailed() async {
        let failed = MessageDeliveryStatus(
            id: "web-1", channel: "alerts", state: .failed, targets: [.init(target: "work:alice@example.org", state: .failed, error: "forbidden")]
        )
        let answer = await Self.post(Self.responder(FakeHandler(), status: FakeStatus(afterWait: failed)), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(
            answer
                == .init(status: 502, json: #"{"channel":"alerts","id":"web-1","state":"failed","targets":[{"error":"forbidden","state":"failed","target":"work:alice@example.org"}]}"#)
        )
    }

    @Test("timeout=SECONDS shortens the wait, never lengthens it", arguments: [("5", Duration.seconds(5)), ("0.25", .milliseconds(250)), ("0", .zero), ("3600", .seconds(30))])
    func waitTimeout(text: String, expected: Duration) async {
        let status = FakeStatus(afterWait: Self.sent)
        _ = await Self.post(Self.responder(FakeHandler(), status: status), .message(channel: "alerts"), "x", query: ["wait": "sent", "timeout": text])
        #expect(status.waits.withLockedValue { $0.map(\.timeout) } == [expected])
    }

    @Test("without wait, the status provider is not asked")
    func noWait() async {
        let status = FakeStatus(afterWait: Self.sent)
        let answer = await Self.post(Self.responder(FakeHandler(), status: status), .message(channel: "alerts"), "x", query: ["timeout": "5"])
        #expect(answer.status == 202)
        #expect(status.waits.withLockedValue { $0.isEmpty })
    }

    @Test("wait=sent without a status provider answers 202 queued")
    func waitWithoutProvider() async {
        let answer = await Self.post(Self.responder(FakeHandler()), .message(channel: "alerts"), "x", query: ["wait": "sent"])
        #expect(answer == .init(status: 202, json: #"{"channel":"alerts","id":"web-1","status":"queued"}"#))
    }

    @Test("an unknown wait is 400 and hands nothing over")
    func badWait() async {
        let handler = FakeHandler()
        let answer = await Self.post(Self.responder(handler, status: FakeStatus()), .message(channel: "alerts"), "x", query: ["wait": "bogus"])
        #expect(answer == .init(status: 400, json: #"{"error":"wait=bogus is not known; use wait=sent"}"#))
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    @Test("a timeout that is not a finite number of seconds is 400", arguments: ["abc", "-1", "nan", "inf", "", "5s"])
    func badTimeout(text: String) async {
        let handler = FakeHandler()
        let answer = await Self.post(
            Self.responder(handler, status: FakeStatus()), .message(channel: "alerts"), "x", query: ["wait": "sent", "timeout": text]
        )
        #expect(answer == .init(status: 400, json: #"{"error":"timeout must be a number of seconds"}"#))
        #expect(handler.messages.withLockedValue { $0.isEmpty })
    }

    @Test(
        "a timeout too large for the millisecond conversion is answered, not a crash",
        arguments: ["1e16", "99999999999999999", "1e300"]
    )
    func hugeTimeout(text: String) async {
        let status = FakeStatus(afterWait: Self.sent)
        let answer = await Self.post(Self.responder(FakeHandler(), status: status), .message(channel: "alerts"), "x", query: ["wait": "sent", "timeout": text])
        // Larger than wait_timeout: the wait is wait_timeout's, then 200 (sent).
        #expect(answer.status == 200)
        #expect(status.waits.withLockedValue { $0.map(\.timeout) } == [.seconds(30)])
    }

    // MARK: - GET /messages/{id}

    @Test("GET /messages/{id}: 200 with the status JSON when known, 404 otherwise")
    func statusRoute() async {
        let responder = Self.responder(FakeHandler(), status: FakeStatus(known: ["web-1": Self.sent]))
        #expect(
            await Self.post(responder, .status(id: "web-1"), "")
                == .init(status: 200, json: #"{"channel":"alerts","id":"web-1","state":"sent","targets":[{"state":"sent","target":"work:alice@example.org"}]}"#)
        )
        #expect(await Self.post(responder, .status(id: "web-9"), "") == .init(status: 404, json: #"{"error":"no message 'web-9' from web"}"#))
        let noProvider = Self.responder(FakeHandler())
        #expect(await Self.post(noProvider, .status(id: "web-1"), "") == .init(status: 404, json: #"{"error":"no message 'web-1' from web"}"#))
    }
}
