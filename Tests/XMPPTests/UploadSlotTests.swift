import Foundation
import Testing

@testable import XMPP

/// Asking for an upload slot and reading the answer (XEP-0363 §4, §5, §8): the request's
/// XML, header filtering and injection attempts, https only, and every error mapping.
@Suite("Upload slots")
struct UploadSlotTests {
    static func iq(_ xml: String) throws -> IQ {
        try IQ(element: StanzaTests.stanza(xml))
    }

    /// A result around `slot` (the inside of `<slot/>`).
    static func result(_ slot: String) throws -> IQ {
        try Self.iq("<iq from='upload.example.org' id='s1' type='result'><slot xmlns='urn:xmpp:http:upload:0'>\(slot)</slot></iq>")
    }

    /// An error answer to the slot request with `error` (the inside of `<error/>`).
    static func errorAnswer(type: String, _ error: String) throws -> IQ {
        try Self.iq(
            """
            <iq from='upload.example.org' id='s1' type='error'>\
            <request xmlns='urn:xmpp:http:upload:0' filename='a.jpg' size='23456' content-type='image/jpeg'/>\
            <error type='\(type)'>\(error)</error></iq>
            """
        )
    }

    static let get = "<get url='https://download.example.org/4a77/a.jpg'/>"

    // MARK: - Request

    @Test("the slot request: an IQ get to the service with filename, size and content-type, escaped")
    func requestXML() throws {
        let request = try UploadSlotRequest(filename: "build <1> & \"log\".txt", size: 23456, contentType: "text/plain; charset=utf-8")
        let iq = request.iq(id: "s1", to: try JID("upload.example.org"))
        #expect(
            XMLSerializer.string(iq.element, parentNamespace: XMPPNamespace.client)
                == "<iq to=\"upload.example.org\" type=\"get\" id=\"s1\"><request xmlns=\"urn:xmpp:http:upload:0\" filename=\"build &lt;1&gt; &amp; &quot;log&quot;.txt\" size=\"23456\" content-type=\"text/plain; charset=utf-8\"/></iq>"
        )
        let reparsed = try IQ(element: StanzaTests.reparsed(iq.element))
        #expect(reparsed.payload?[attribute: "filename"] == "build <1> & \"log\".txt")
        let untyped = try UploadSlotRequest(filename: "a.bin", size: 0, contentType: nil)
        #expect(XMLSerializer.string(untyped.element) == "<request xmlns=\"urn:xmpp:http:upload:0\" filename=\"a.bin\" size=\"0\"/>")
    }

    @Test("requests that cannot be made are refused before sending")
    func invalidRequests() {
        #expect(throws: UploadError.invalidRequest("the file name must have 1 to 1024 bytes")) { try UploadSlotRequest(filename: "", size: 1, contentType: nil) }
        #expect(throws: UploadError.invalidRequest("the file name has a control character or '/'")) {
            try UploadSlotRequest(filename: "a\r\nb", size: 1, contentType: nil)
        }
        #expect(throws: UploadError.invalidRequest("the file name has a control character or '/'")) {
            try UploadSlotRequest(filename: "../etc/passwd", size: 1, contentType: nil)
        }
        #expect(throws: UploadError.invalidRequest("negative size -1")) { try UploadSlotRequest(filename: "a", size: -1, contentType: nil) }
        #expect(throws: UploadError.invalidRequest("content type 'text/plain\r\nX-Evil: 1' is not a media type")) {
            try UploadSlotRequest(filename: "a", size: 1, contentType: "text/plain\r\nX-Evil: 1")
        }
        #expect(throws: UploadError.invalidRequest("content type 'plain' is not a media type")) { try UploadSlotRequest(filename: "a", size: 1, contentType: "plain") }
    }

    // MARK: - Result

    @Test("XEP-0363 §4's example: URLs taken apart, Authorization kept, Host dropped (§4 allows only Authorization, Cookie, Expires)")
    func specExample() throws {
        let slot = try UploadSlot(
            result: Self.result(
                """
                <put url='https://upload.example.org/4a77/my-juliet.jpg'>\
                <header name='Authorization'>Basic Base64String==</header>\
                <header name='Host'>evil.example</header>\
                </put>\(Self.get)
                """
            )
        )
        #expect(slot.putURL == (try HTTPURL("https://upload.example.org/4a77/my-juliet.jpg")))
        #expect(slot.putURL.host == "upload.example.org")
        #expect(slot.putURL.port == 443)
        #expect(slot.putURL.target == "/4a77/my-juliet.jpg")
        #expect(slot.putHeaders == [HTTPHeaderField(name: "Authorization", value: "Basic Base64String==")])
        #expect(slot.getURL.description == "https://download.example.org/4a77/a.jpg")
    }

    @Test("names match case-insensitively and are sent canonically; Cookie and Expires kept; values trimmed; others dropped")
    func headerFiltering() throws {
        let slot = try UploadSlot(
            result: Self.result(
                """
                <put url='https://upload.example.org:5281/file_share/x/a.jpg'>\
                <header name='AUTHORIZATION'> Bearer abc </header>\
                <header name='cookie'>session=1</header>\
                <header name=' Expires '>Wed, 21 Oct 2015 07:28:00 GMT</header>\
                <header name='Content-Type'>text/html</header>\
                <header name='Content-Length'>0</header>\
                <header name='Transfer-Encoding'>chunked</header>\
                <header name='X-Custom'>1</header>\
                <header>no name</header>\
                <header name='Cookie'></header>\
                </put>\(Self.get)
                """
            )
        )
        #expect(
            slot.putHeaders == [
                HTTPHeaderField(name: "Authorization", value: "Bearer abc"),
                HTTPHeaderField(name: "Cookie", value: "session=1"),
                HTTPHeaderField(name: "Expires", value: "Wed, 21 Oct 2015 07:28:00 GMT"),
            ]
        )
        #expect(slot.putURL.port == 5281)
        #expect(slot.putURL.hostHeader == "upload.example.org:5281")
    }

    @Test("header injection: a value with CR, LF (raw or as character references) or DEL is dropped whole (XML 1.0 carries no other C0 control)")
    func headerInjection() throws {
        let slot = try UploadSlot(
            result: Self.result(
                """
                <put url='https://upload.example.org/x/a.jpg'>\
                <header name='Authorization'>Bearer a&#13;&#10;Host: evil.example</header>\
                <header name='Cookie'>a=1&#10;X-Evil: 1</header>\
                <header name='Cookie'>a=1&#13;X-Evil: 1</header>\
                <header name='Expires'>a&#127;b</header>\
                <header name='Authorization&#13;&#10;X-Evil'>1</header>\
                <header name='Cookie'>ok=1</header>\
                </put>\(Self.get)
                """
            )
        )
        #expect(slot.putHeaders == [HTTPHeaderField(name: "Cookie", value: "ok=1")])
        // A raw newline inside the element's text is a newline too.
        let raw = try UploadSlot(
            result: Self.result("<put url='https://upload.example.org/x'><header name='Cookie'>a=1\nX-Evil: 1</header></put>\(Self.get)")
        )
        #expect(raw.putHeaders == [])
    }

    @Test("at most 16 header fields are kept")
    func headerLimit() throws {
        let headers = (0..<40).map { "<header name='Cookie'>c\($0)=1</header>" }.joined()
        let slot = try UploadSlot(result: Self.result("<put url='https://upload.example.org/x'>\(headers)</put>\(Self.get)"))
        #expect(slot.putHeaders.count == 16)
        #expect(slot.putHeaders.last == HTTPHeaderField(name: "Cookie", value: "c15=1"))
    }

    @Test("http URLs are refused, for PUT and GET, unless allowed explicitly")
    func insecureURLs() throws {
        let httpPut = try Self.result("<put url='http://upload.example.org/x/a.jpg'/>\(Self.get)")
        #expect(throws: UploadError.invalidSlot("PUT URL: plain http URL refused (only https)")) { try UploadSlot(result: httpPut) }
        let httpGet = try Self.result("<put url='https://upload.example.org/x/a.jpg'/><get url='HTTP://download.example.org/x/a.jpg'/>")
        #expect(throws: UploadError.invalidSlot("GET URL: plain http URL refused (only https)")) { try UploadSlot(result: httpGet) }
        let allowed = try UploadSlot(result: httpPut, allowInsecureHTTP: true)
        #expect(allowed.putURL.scheme == .http)
        #expect(allowed.putURL.port == 80)
    }

    @Test("slots without URLs, with other schemes or malformed URLs are refused")
    func malformedSlots() throws {
        let cases: [(String, UploadError)] = [
            ("<get url='https://d.example.org/a'/>", .invalidSlot("no PUT URL")),
            ("<put url='https://u.example.org/a'/>", .invalidSlot("no GET URL")),
            ("<put/><get url='https://d.example.org/a'/>", .invalidSlot("no PUT URL")),
            ("<put url='ftp://u.example.org/a'/>\(Self.get)", .invalidSlot("PUT URL: unsupported URL scheme 'ftp' (only https)")),
            ("<put url='javascript:alert(1)'/>\(Self.get)", .invalidSlot("PUT URL: malformed URL: not an absolute URL")),
            ("<put url='https://user:pw@u.example.org/a'/>\(Self.get)", .invalidSlot("PUT URL: malformed URL: user info is not allowed")),
            ("<put url='https://u.example.org:0/a'/>\(Self.get)", .invalidSlot("PUT URL: malformed URL: invalid port")),
            ("<put url='https://u.example.org/a&#10;b'/>\(Self.get)", .invalidSlot("PUT URL: malformed URL: control character in path or query")),
            ("<put url='https:///a'/>\(Self.get)", .invalidSlot("PUT URL: malformed URL: no host")),
        ]
        for (slot, expected) in cases {
            #expect(throws: expected) { try UploadSlot(result: Self.result(slot)) }
        }
        let noSlot = try Self.iq("<iq from='upload.example.org' id='s1' type='result'/>")
        #expect(throws: UploadError.invalidSlot("no <slot/> in the result")) { try UploadSlot(result: noSlot) }
        let otherNamespace = try Self.iq("<iq from='upload.example.org' id='s1' type='result'><slot xmlns='urn:xmpp:http:upload'><put url='https://u/a'/><get url='https://u/a'/></slot></iq>")
        #expect(throws: UploadError.invalidSlot("no <slot/> in the result")) { try UploadSlot(result: otherNamespace) }
    }

    // MARK: - Errors (§5)

    @Test("file-too-large (§5 example): the service's max-file-size and the size asked for")
    func fileTooLarge() throws {
        let answer = try Self.errorAnswer(
            type: "modify",
            """
            <not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>File too large. The maximum file size is 20000 bytes</text>\
            <file-too-large xmlns='urn:xmpp:http:upload:0'><max-file-size>20000</max-file-size></file-too-large>
            """
        )
        #expect(throws: UploadError.fileTooLarge(size: 23456, maxFileSize: 20000)) { try UploadSlot(answer: answer, requestedSize: 23456) }
        let withoutLimit = try Self.errorAnswer(
            type: "modify", "<not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><file-too-large xmlns='urn:xmpp:http:upload:0'/>"
        )
        #expect(throws: UploadError.fileTooLarge(size: 23456, maxFileSize: nil)) { try UploadSlot(answer: withoutLimit, requestedSize: 23456) }
    }

    @Test("not-allowed (§5 example) and forbidden (Prosody's access refusal), with the service's text")
    func notAllowed() throws {
        let answer = try Self.errorAnswer(
            type: "cancel",
            """
            <not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>Only premium members are allowed to upload files</text>
            """
        )
        #expect(throws: UploadError.notAllowed(text: "Only premium members are allowed to upload files")) { try UploadSlot(answer: answer, requestedSize: 1) }
        let forbidden = try Self.errorAnswer(type: "auth", "<forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>")
        #expect(throws: UploadError.notAllowed(text: nil)) { try UploadSlot(answer: forbidden, requestedSize: 1) }
    }

    @Test("resource-constraint with <retry stamp/> (§5 example): try later, at the stamp")
    func retry() throws {
        let answer = try Self.errorAnswer(
            type: "wait",
            """
            <resource-constraint xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>Quota reached. You can only upload 5 files in 5 minutes</text>\
            <retry xmlns='urn:xmpp:http:upload:0' stamp='2017-12-03T23:42:05Z'/>
            """
        )
        let stamp = Date(timeIntervalSince1970: 1_512_344_525)
        #expect(throws: UploadError.tryLater(retryAt: stamp, text: "Quota reached. You can only upload 5 files in 5 minutes")) {
            try UploadSlot(answer: answer, requestedSize: 1)
        }
        let fractional = try Self.errorAnswer(
            type: "wait", "<resource-constraint xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><retry xmlns='urn:xmpp:http:upload:0' stamp='2017-12-03T23:42:05.500Z'/>"
        )
        #expect(throws: UploadError.tryLater(retryAt: stamp.addingTimeInterval(0.5), text: nil)) { try UploadSlot(answer: fractional, requestedSize: 1) }
        let badStamp = try Self.errorAnswer(
            type: "wait", "<resource-constraint xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><retry xmlns='urn:xmpp:http:upload:0' stamp='soon'/>"
        )
        #expect(throws: UploadError.tryLater(retryAt: nil, text: nil)) { try UploadSlot(answer: badStamp, requestedSize: 1) }
        // Prosody's daily quota: resource-constraint without <retry/>.
        let quota = try Self.errorAnswer(
            type: "wait", "<resource-constraint xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>Daily quota reached</text>"
        )
        #expect(throws: UploadError.tryLater(retryAt: nil, text: "Daily quota reached")) { try UploadSlot(answer: quota, requestedSize: 1) }
        let wait = try Self.errorAnswer(type: "wait", "<internal-server-error xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>")
        #expect(throws: UploadError.tryLater(retryAt: nil, text: nil)) { try UploadSlot(answer: wait, requestedSize: 1) }
    }

    @Test("any other error keeps its condition, type and text")
    func otherErrors() throws {
        let badRequest = try Self.errorAnswer(
            type: "modify", "<bad-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>Invalid filename</text>"
        )
        #expect(throws: UploadError.refused(StanzaError(.badRequest, type: .modify, text: "Invalid filename"))) { try UploadSlot(answer: badRequest, requestedSize: 1) }
        let notAcceptable = try Self.errorAnswer(type: "modify", "<not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>")
        #expect(throws: UploadError.refused(StanzaError(.notAcceptable, type: .modify))) { try UploadSlot(answer: notAcceptable, requestedSize: 1) }
        let unknown = try Self.errorAnswer(type: "cancel", "<made-up xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>")
        #expect(throws: UploadError.refused(StanzaError(.undefinedCondition, type: .cancel))) { try UploadSlot(answer: unknown, requestedSize: 1) }
        let noError = try Self.iq("<iq from='upload.example.org' id='s1' type='error'/>")
        #expect(throws: UploadError.refused(StanzaError(.undefinedCondition))) { try UploadSlot(answer: noError, requestedSize: 1) }
    }

    @Test("a stanza error keeps its application-specific condition through parse and serialisation (RFC 6120 §8.3.2)")
    func applicationCondition() throws {
        let answer = try Self.errorAnswer(
            type: "modify",
            "<not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/><file-too-large xmlns='urn:xmpp:http:upload:0'><max-file-size>7</max-file-size></file-too-large>"
        )
        let error = try #require(answer.error)
        #expect(error.applicationCondition?.name == "file-too-large")
        #expect(error.applicationCondition?.namespace == UploadService.namespace)
        let reparsed = try IQ(element: StanzaTests.reparsed(answer.element))
        #expect(reparsed.error == error)
    }
}
