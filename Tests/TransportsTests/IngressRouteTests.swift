import Testing
import TransportCore

@testable import HTTPIngress

/// Routing HTTP ingress requests by method and path (no I/O): the three routes, 404 and
/// 405 with their JSON bodies, percent-decoding, and paths crafted to name something else.
@Suite("IngressRoute")
struct IngressRouteTests {
    static func route(_ method: String, _ path: String) -> IngressRoute? {
        if case .success(let route) = IngressRoute.match(method: method, path: path) { return route }
        return nil
    }

    static func error(_ method: String, _ path: String) -> IngressError? {
        if case .failure(let error) = IngressRoute.match(method: method, path: path) { return error }
        return nil
    }

    // MARK: - Routes

    @Test("POST /channels/{channel} is a message into that channel")
    func message() {
        #expect(Self.route("POST", "/channels/alerts") == .message(channel: "alerts"))
        #expect(Self.route("POST", "/channels/ops-2_b") == .message(channel: "ops-2_b"))
    }

    @Test("POST /hooks/alertmanager|grafana/{channel} is a webhook of that kind")
    func webhooks() {
        #expect(Self.route("POST", "/hooks/alertmanager/alerts") == .webhook(channel: "alerts", kind: .alertmanager))
        #expect(Self.route("POST", "/hooks/grafana/ops") == .webhook(channel: "ops", kind: .grafana))
    }

    @Test("GET and HEAD /messages/{id} ask for a message's status")
    func status() {
        #expect(Self.route("GET", "/messages/web-1") == .status(id: "web-1"))
        #expect(Self.route("HEAD", "/messages/web-1") == .status(id: "web-1"))
    }

    @Test("GET /channels/{channel}/messages reads that channel's archive; another last segment names nothing")
    func history() {
        #expect(Self.route("GET", "/channels/alerts/messages") == .history(channel: "alerts"))
        #expect(Self.route("HEAD", "/channels/a%20b/messages") == .history(channel: "a b"))
        #expect(Self.error("GET", "/channels/alerts/other")?.status == 404)
        #expect(Self.error("GET", "/channels//messages")?.status == 404)
        #expect(Self.error("POST", "/channels/alerts/messages")?.status == 405)
        #expect(IngressRoute.allowedMethods(path: "/channels/alerts/messages") == "GET, HEAD")
    }

    // MARK: - 405

    @Test(
        "the wrong method on a known path is 405 naming the allowed one",
        arguments: [
            ("GET", "/channels/alerts", "POST"),
            ("HEAD", "/channels/alerts", "POST"),
            ("PUT", "/channels/alerts", "POST"),
            ("DELETE", "/hooks/grafana/alerts", "POST"),
            ("GET", "/hooks/alertmanager/alerts", "POST"),
            ("POST", "/messages/web-1", "GET"),
            ("PUT", "/messages/web-1", "GET"),
        ]
    )
    func methodNotAllowed(method: String, path: String, allowed: String) {
        let error = Self.error(method, path)
        #expect(error == IngressError(405, "method not allowed; use \(allowed)"))
        #expect(error?.json == "{\"error\":\"method not allowed; use \(allowed)\"}")
    }

    @Test("methods are compared exactly: a lower-case post is not POST")
    func methodCase() {
        #expect(Self.error("post", "/channels/alerts")?.status == 405)
    }

    // MARK: - 404

    @Test(
        "paths that name no route are 404 with the path in the reason",
        arguments: [
            "/", "", "channels/alerts", "/channels", "/channels/", "/channels/a/b", "/channels/alerts/",
            "//channels/alerts", "/Channels/alerts", "/hooks", "/hooks/alertmanager", "/hooks/alertmanager/",
            "/hooks/alertmanager/a/b", "/messages", "/messages/", "/messages/a/b", "/unknown/x", "/metrics",
        ]
    )
    func notFound(path: String) {
        let error = Self.error("POST", path)
        #expect(error == IngressError(404, "no such path: \(path)"))
        // 404 comes before 405: a GET on a path that is not a route is still 404.
        #expect(Self.error("GET", path)?.status == 404)
    }

    @Test("an unknown webhook kind is 404 naming the known ones")
    func unknownWebhook() {
        let error = Self.error("POST", "/hooks/slack/alerts")
        #expect(error?.status == 404)
        #expect(error?.message == "no webhook 'slack'; use /hooks/alertmanager/{channel} or /hooks/grafana/{channel}")
        #expect(Self.error("POST", "/hooks/Grafana/alerts")?.message.hasPrefix("no webhook 'Grafana'") == true)
    }

    @Test("the 404 body is JSON with the raw path escaped")
    func notFoundJSON() {
        #expect(Self.error("POST", "/x\"y")?.json == #"{"error":"no such path: /x\"y"}"#)
    }

    // MARK: - Percent-decoding

    @Test(
        "segments are percent-decoded (RFC 3986), upper- or lower-case hex",
        arguments: [
            ("/channels/my%20channel", IngressRoute.message(channel: "my channel")),
            ("/channels/caf%C3%A9", .message(channel: "café")),
            ("/channels/caf%c3%a9", .message(channel: "café")),
            ("/channels/%61lerts", .message(channel: "alerts")),
            ("/%63hannels/alerts", .message(channel: "alerts")),
            ("/hooks/%67rafana/ops", .webhook(channel: "ops", kind: .grafana)),
            ("/channels/a+b", .message(channel: "a+b")),
            ("/channels/%25", .message(channel: "%")),
            ("/channels/%2E%2E", .message(channel: "..")),
        ]
    )
    func percentDecoding(path: String, expected: IngressRoute) {
        #expect(Self.route("POST", path) == expected)
    }

    @Test("a message id is percent-decoded too")
    func statusDecoding() {
        #expect(Self.route("GET", "/messages/web-key-a%3Ab") == .status(id: "web-key-a:b"))
    }

    @Test(
        "hostile segments name nothing: encoded slashes, NUL and control characters, bad escapes, bytes that are not UTF-8",
        arguments: [
            "/channels/a%2Fb", "/channels/a%2fb", "/channels/%2F", "/hooks/alertmanager/x%2F..%2Fy", "/messages/a%2Fb",
            "/channels/a%00", "/channels/%00alerts", "/channels/a%0Ab", "/channels/a%0D%0Ab", "/channels/a%09b", "/channels/a%1Fb",
            "/channels/a%7F", "/channels/a\u{01}b", "/channels/a\tb", "/channels/a\nb", "/channels/a\u{7F}",
            "/channels/%", "/channels/a%", "/channels/%4", "/channels/%4g", "/channels/%zz", "/channels/%%41",
            "/channels/%FF", "/channels/%C3", "/channels/%C0%AF", "/channels/%ED%A0%80",
            "/%2Fchannels/alerts", "/channels%2Falerts",
        ]
    )
    func hostile(path: String) {
        #expect(Self.error("POST", path) == IngressError(404, "no such path: \(path)"))
        #expect(Self.error("GET", path)?.status == 404)
    }

    @Test("a bad escape in another segment also makes the whole path unknown")
    func badEscapeElsewhere() {
        #expect(Self.error("POST", "/%zz/alerts")?.status == 404)
        #expect(Self.error("POST", "/hooks/%zz/alerts")?.message == "no such path: /hooks/%zz/alerts")
    }

    // MARK: - Errors

    @Test("IngressError's helpers give the documented statuses and messages")
    func errors() {
        #expect(IngressError.badRequest("x") == IngressError(400, "x"))
        #expect(IngressError.unauthorized() == IngressError(401, "missing or wrong bearer token"))
        #expect(IngressError.tooLarge(limit: 10) == IngressError(413, "body over the limit of 10 bytes"))
        #expect(IngressError.unsupportedType("image/png") == IngressError(415, "content type image/png not supported; send text/plain or application/json"))
        #expect(IngressError.unprocessable("y") == IngressError(422, "y"))
        #expect(IngressError(404, "a/b").json == #"{"error":"a/b"}"#)
        #expect(IngressError(404, "a/b").description == "404 a/b")
    }
}
