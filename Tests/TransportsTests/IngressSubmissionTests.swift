import Testing
import TransportCore
import XMPP

@testable import HTTPIngress

/// Reading one message from an HTTP request's content type, headers and body (no I/O):
/// text and JSON bodies, headers for subject and type, and every refusal's status.
@Suite("IngressSubmission")
struct IngressSubmissionTests {
    /// Header lookup by name in any case, as HTTP fields are.
    static func headers(_ fields: [String: String]) -> (String) -> String? {
        let lowered = Dictionary(uniqueKeysWithValues: fields.map { ($0.key.lowercased(), $0.value) })
        return { lowered[$0.lowercased()] }
    }

    static func parse(_ contentType: String?, _ body: String, headers: [String: String] = [:]) -> Result<IngressSubmission, IngressError> {
        IngressSubmission.parse(contentType: contentType, header: Self.headers(headers), body: Array(body.utf8))
    }

    static func parse(_ contentType: String?, bytes: [UInt8], headers: [String: String] = [:]) -> Result<IngressSubmission, IngressError> {
        IngressSubmission.parse(contentType: contentType, header: Self.headers(headers), body: bytes)
    }

    static let jsonShape = "JSON body must be {\"body\": string, \"subject\": string, \"type\": \"chat\"|\"normal\"|\"headline\"}"

    // MARK: - Text bodies

    @Test("a text/plain body is the message as it is, with charset ignored")
    func plainText() {
        #expect(Self.parse("text/plain; charset=utf-8", "disk full on db1\nsecond line") == .success(IngressSubmission(body: "disk full on db1\nsecond line")))
        #expect(Self.parse("TEXT/PLAIN", "x") == .success(IngressSubmission(body: "x")))
    }

    @Test("no content type is text")
    func noContentType() {
        #expect(Self.parse(nil, "hello") == .success(IngressSubmission(body: "hello")))
        #expect(Self.parse("", "hello") == .success(IngressSubmission(body: "hello")))
    }

    @Test("curl -d's default application/x-www-form-urlencoded is text, taken verbatim (not form-decoded)")
    func curlDefault() {
        #expect(Self.parse("application/x-www-form-urlencoded", "backup done: 100% ok") == .success(IngressSubmission(body: "backup done: 100% ok")))
        #expect(Self.parse("application/x-www-form-urlencoded", "a+b%20c") == .success(IngressSubmission(body: "a+b%20c")))
    }

    @Test("Title, else X-Title, is the subject; X-Type the type in any case")
    func textHeaders() {
        #expect(
            Self.parse("text/plain", "b", headers: ["Title": "T", "X-Title": "XT", "X-Type": "Headline"])
                == .success(IngressSubmission(body: "b", subject: "T", type: .headline))
        )
        #expect(Self.parse(nil, "b", headers: ["x-title": "XT"]) == .success(IngressSubmission(body: "b", subject: "XT")))
        #expect(Self.parse(nil, "b", headers: ["X-TYPE": "normal"]) == .success(IngressSubmission(body: "b", type: .normal)))
    }

    @Test("an empty Title is no subject")
    func emptyTitle() {
        #expect(Self.parse(nil, "b", headers: ["Title": ""]) == .success(IngressSubmission(body: "b", subject: nil)))
    }

    @Test("an unknown X-Type is 422")
    func unknownHeaderType() {
        #expect(Self.parse(nil, "b", headers: ["X-Type": "sms"]) == .failure(IngressError(422, "unknown type 'sms'; use chat, normal or headline")))
        #expect(Self.parse(nil, "b", headers: ["X-Type": ""]) == .failure(IngressError(422, "unknown type ''; use chat, normal or headline")))
    }

    // MARK: - JSON bodies

    @Test("a JSON body's fields are the message")
    func json() {
        #expect(
            Self.parse("application/json", #"{"body":"disk full","subject":"db1","type":"normal"}"#)
                == .success(IngressSubmission(body: "disk full", subject: "db1", type: .normal))
        )
        #expect(Self.parse("application/json; charset=utf-8", #"{"body":"only"}"#) == .success(IngressSubmission(body: "only")))
    }

    @Test("a JSON body's rich fields (issue 12): a file needs no body, a reaction neither; a wrong shape is 422")
    func jsonRichFields() {
        var file = IngressSubmission(body: "")
        file.content = MessageContent(url: "https://u.test/a.png")
        #expect(Self.parse("application/json", #"{"url":"https://u.test/a.png"}"#) == .success(file))
        var reaction = IngressSubmission(body: "")
        reaction.content = MessageContent(reactionTo: "m-1", reactions: ["👍"])
        #expect(Self.parse("application/json", #"{"reaction":{"id":"m-1","emojis":["👍"]}}"#) == .success(reaction))
        var reply = IngressSubmission(body: "yes")
        reply.content = MessageContent(replyTo: "m-2")
        #expect(Self.parse("application/json", #"{"body":"yes","reply_to":"m-2"}"#) == .success(reply))
        guard case .failure(let error) = Self.parse("application/json", #"{"reaction":"👍"}"#) else {
            Issue.record("a reaction that is not an object was accepted")
            return
        }
        #expect(error.status == 422)
        guard case .failure = Self.parse("application/json", #"{"subject":"s"}"#) else {
            Issue.record("a JSON body with neither body nor rich fields was accepted")
            return
        }
    }

    @Test("JSON fields win over Title, X-Title and X-Type")
    func jsonWinsOverHeaders() {
        let headers = ["Title": "header title", "X-Title": "x title", "X-Type": "headline"]
        #expect(
            Self.parse("application/json", #"{"body":"b","subject":"json subject","type":"CHAT"}"#, headers: headers)
                == .success(IngressSubmission(body: "b", subject: "json subject", type: .chat))
        )
    }

    @Test("headers fill what the JSON leaves out")
    func headersFillJSONGaps() {
        #expect(
            Self.parse("application/json", #"{"body":"b"}"#, headers: ["X-Title": "x title", "X-Type": "headline"])
                == .success(IngressSubmission(body: "b", subject: "x title", type: .headline))
        )
        #expect(Self.parse("application/json", #"{"body":"b","subject":null}"#, headers: ["Title": "t"]) == .success(IngressSubmission(body: "b", subject: "t")))
    }

    @Test("priority 1 to 5 or ntfy's names, from JSON, else the query, else X-Priority; anything else is 422 naming where it came from")
    func priority() {
        func priority(_ body: String, type: String = "application/json", headers: [String: String] = [:], query: [String: String] = [:]) -> Result<Int?, IngressError> {
            let lowered = Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) })
            return IngressSubmission.parse(contentType: type, header: { lowered[$0.lowercased()] }, query: query, body: Array(body.utf8)).map(\.priority)
        }
        #expect(priority(#"{"body":"b"}"#) == .success(nil))
        #expect(priority(#"{"body":"b","priority":5}"#, headers: ["X-Priority": "1"], query: ["priority": "2"]) == .success(5))
        #expect(priority(#"{"body":"b","priority":"high"}"#) == .success(4))
        #expect(priority(#"{"body":"b"}"#, headers: ["X-Priority": "1"], query: ["priority": "urgent"]) == .success(5))
        #expect(priority("disk full", type: "text/plain", headers: ["X-Priority": "min"]) == .success(1))
        #expect(priority(#"{"body":"b","priority":6}"#).map { _ in 0 } == .failure(IngressError(422, "\"priority\" '6' is not a priority; use 1 (lowest) to 5 (urgent), or min, low, default, high, max")))
        #expect(priority("x", type: "text/plain", headers: ["X-Priority": "0"]) == .failure(IngressError(422, "X-Priority '0' is not a priority; use 1 (lowest) to 5 (urgent), or min, low, default, high, max")))
        #expect(priority("x", type: "text/plain", query: ["priority": "soon"]).map { _ in 0 } == .failure(IngressError(422, "priority 'soon' is not a priority; use 1 (lowest) to 5 (urgent), or min, low, default, high, max")))
    }

    @Test("an unknown JSON key is ignored; an unknown JSON type is 422")
    func jsonExtras() {
        #expect(Self.parse("application/json", #"{"body":"b","tags":["x"]}"#) == .success(IngressSubmission(body: "b")))
        #expect(Self.parse("application/json", #"{"body":"b","type":"sms"}"#) == .failure(IngressError(422, "unknown type 'sms'; use chat, normal or headline")))
        // The JSON type replaces a valid header type, so a bad one is not rescued by it.
        #expect(Self.parse("application/json", #"{"body":"b","type":"sms"}"#, headers: ["X-Type": "chat"]).status == 422)
    }

    @Test("+json media types (application/problem+json) are JSON")
    func plusJSON() {
        #expect(Self.parse("application/problem+json", #"{"body":"p"}"#) == .success(IngressSubmission(body: "p")))
        #expect(Self.parse("application/vnd.example+json; v=1", #"{"body":"v"}"#) == .success(IngressSubmission(body: "v")))
    }

    @Test(
        "malformed JSON is 400",
        arguments: [#"{"body":"#, #"{body: "x"}"#, "not json", #"{"body":"x""#, "", #"{"body":"x"}}"#]
    )
    func malformedJSON(text: String) {
        let result = Self.parse("application/json", text)
        #expect(result.status == 400)
        #expect(result.message?.hasPrefix("bad JSON: ") == true)
    }

    @Test(
        "JSON of the wrong shape or field types is 422",
        arguments: [#"{"body":5}"#, #"{"body":"x","subject":1}"#, #"{"body":"x","type":true}"#, #"["body"]"#, #""just a string""#, "42", #"{"body":["x"]}"#]
    )
    func wrongTypes(text: String) {
        #expect(Self.parse("application/json", text) == .failure(IngressError(422, Self.jsonShape)))
    }

    @Test("JSON without a body (or a null one) is 422")
    func missingBody() {
        #expect(Self.parse("application/json", #"{"subject":"s"}"#) == .failure(IngressError(422, #"JSON body has no "body""#)))
        #expect(Self.parse("application/json", #"{"body":null}"#) == .failure(IngressError(422, #"JSON body has no "body""#)))
        #expect(Self.parse("application/json", "{}") == .failure(IngressError(422, #"JSON body has no "body""#)))
    }

    // MARK: - Empty and invalid bodies

    @Test("an empty or whitespace-only message is 422", arguments: ["", " ", "\n", " \t\r\n ", "\u{00A0}\u{2003}"])
    func emptyText(text: String) {
        #expect(Self.parse("text/plain", text) == .failure(IngressError(422, "empty message")))
        #expect(Self.parse("application/json", #"{"body":"\#(text.unicodeScalars.map(jsonEscape).joined())"}"#) == .failure(IngressError(422, "empty message")))
    }

    @Test("a body that is not UTF-8 is 400, text or JSON")
    func invalidUTF8() {
        let bytes: [UInt8] = [0x68, 0x69, 0xFF, 0xFE]
        #expect(Self.parse("text/plain", bytes: bytes) == .failure(IngressError(400, "body is not valid UTF-8")))
        #expect(Self.parse(nil, bytes: [0xC3]) == .failure(IngressError(400, "body is not valid UTF-8")))
        #expect(Self.parse("application/json", bytes: Array(#"{"body":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)) == .failure(IngressError(400, "body is not valid UTF-8")))
    }

    // MARK: - Content types

    @Test(
        "anything but text and JSON is 415 naming the media type",
        arguments: [
            ("image/png", "image/png"),
            ("multipart/form-data; boundary=----x", "multipart/form-data"),
            ("text/html", "text/html"),
            ("application/xml", "application/xml"),
            ("text/json", "text/json"),
            ("application/octet-stream", "application/octet-stream"),
            ("Application/JSONX", "application/jsonx"),
        ]
    )
    func unsupported(contentType: String, media: String) {
        let expected = IngressError.unsupportedType(media)
        #expect(expected.status == 415)
        #expect(Self.parse(contentType, "hello") == .failure(expected))
        #expect(IngressSubmission.bodyKind(contentType: contentType) == .failure(expected))
    }

    @Test("bodyKind reads the media type without its parameters")
    func bodyKind() {
        #expect(IngressSubmission.bodyKind(contentType: nil) == .success(.text))
        #expect(IngressSubmission.bodyKind(contentType: " text/plain ; charset=utf-8") == .success(.text))
        #expect(IngressSubmission.bodyKind(contentType: "application/json;charset=utf-8") == .success(.json))
        #expect(IngressSubmission.bodyKind(contentType: "application/problem+json") == .success(.json))
    }

    // MARK: - Idempotency-Key

    @Test("an Idempotency-Key of 1 to 128 characters of A-Z a-z 0-9 . _ : - is kept")
    func validKeys() {
        for key in ["k", "Ab9._:-", String(repeating: "a", count: 128), "2026-11-24T05:00:00Z.alert_1"] {
            #expect(Self.parse(nil, "b", headers: ["Idempotency-Key": key]) == .success(IngressSubmission(body: "b", idempotencyKey: key)))
            #expect(IngressSubmission.isValidKey(key))
        }
        #expect(
            Self.parse("application/json", #"{"body":"b"}"#, headers: ["idempotency-key": "k1"]) == .success(IngressSubmission(body: "b", idempotencyKey: "k1"))
        )
    }

    @Test(
        "any other Idempotency-Key is 400",
        arguments: [String(repeating: "a", count: 129), "", "has space", "tab\tkey", "slash/key", "é", "key;", "k\"", "a,b"]
    )
    func invalidKeys(key: String) {
        #expect(
            Self.parse(nil, "b", headers: ["Idempotency-Key": key])
                == .failure(IngressError(400, "Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -"))
        )
        #expect(!IngressSubmission.isValidKey(key))
    }

    @Test("a refused content type is reported before a bad key, a bad key before a bad body")
    func order() {
        #expect(Self.parse("image/png", "", headers: ["Idempotency-Key": "bad key"]).status == 415)
        #expect(Self.parse("text/plain", bytes: [0xFF], headers: ["Idempotency-Key": "bad key"]).status == 400)
        #expect(Self.parse("text/plain", bytes: [0xFF], headers: ["Idempotency-Key": "bad key"]).message?.hasPrefix("Idempotency-Key") == true)
    }
}

extension Result where Failure == IngressError {
    /// The failure's status, nil on success.
    var status: Int? {
        if case .failure(let error) = self { return error.status }
        return nil
    }

    var message: String? {
        if case .failure(let error) = self { return error.message }
        return nil
    }
}

/// A scalar as a JSON string escape (`\uXXXX`).
private func jsonEscape(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
