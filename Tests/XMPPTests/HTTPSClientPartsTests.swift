import NIOCore
import NIOHTTP1
import Testing

@testable import XMPP

/// The HTTPS client's pure parts: URLs from peers (RFC 3986, RFC 9110 §4.2), the request
/// head (RFC 9112 §3) and the response with its body limit (RFC 9112 §6).
@Suite("HTTPS client parts")
struct HTTPSClientPartsTests {
    // MARK: - URL

    @Test("URLs are taken apart: lower-case host, default and explicit ports, target with query, fragment dropped")
    func urls() throws {
        let url = try HTTPURL("HTTPS://Upload.Example.ORG:5281/file_share/abc/build.log?x=1#frag")
        #expect(url.scheme == .https)
        #expect(url.host == "upload.example.org")
        #expect(url.port == 5281)
        #expect(url.target == "/file_share/abc/build.log?x=1")
        #expect(url.hostHeader == "upload.example.org:5281")
        #expect(url.description == "https://upload.example.org:5281/file_share/abc/build.log?x=1")
        let bare = try HTTPURL("https://example.org")
        #expect(bare.port == 443)
        #expect(bare.target == "/")
        #expect(bare.hostHeader == "example.org")
        #expect(try HTTPURL("https://example.org?q").target == "/?q")
        #expect(try HTTPURL("https://example.org:443/").description == "https://example.org/")
    }

    @Test("IPv6 literals keep their brackets in Host and lose them in host")
    func ipv6() throws {
        let url = try HTTPURL("https://[::1]:8443/a")
        #expect(url.host == "::1")
        #expect(url.port == 8443)
        #expect(url.hostHeader == "[::1]:8443")
        #expect(throws: HTTPURL.ParseError.malformed("invalid IPv6 address")) { try HTTPURL("https://[example.org]/") }
        #expect(throws: HTTPURL.ParseError.malformed("unclosed IPv6 address")) { try HTTPURL("https://[::1/") }
        #expect(throws: HTTPURL.ParseError.malformed("junk after the IPv6 address")) { try HTTPURL("https://[::1]x/") }
    }

    @Test("non-ASCII and spaces in the path are percent-encoded; control characters are refused")
    func encoding() throws {
        #expect(try HTTPURL("https://example.org/ä b.txt").target == "/%C3%A4%20b.txt")
        for bad in ["https://example.org/a\rb", "https://example.org/a\nb", "https://example.org/a\u{0}", "https://example.org/\u{7F}"] {
            #expect(throws: HTTPURL.ParseError.malformed("control character in path or query")) { try HTTPURL(bad) }
        }
    }

    @Test("refused: http without the flag, other schemes, user info, bad hosts and ports, relative and overlong URLs")
    func refused() throws {
        #expect(throws: HTTPURL.ParseError.insecureHTTP) { try HTTPURL("http://example.org/a") }
        #expect(try HTTPURL("http://example.org/a", allowInsecureHTTP: true).port == 80)
        #expect(throws: HTTPURL.ParseError.unsupportedScheme("file")) { try HTTPURL("file:///etc/passwd") }
        #expect(throws: HTTPURL.ParseError.malformed("not an absolute URL")) { try HTTPURL("/relative") }
        #expect(throws: HTTPURL.ParseError.malformed("user info is not allowed")) { try HTTPURL("https://a@example.org/") }
        #expect(throws: HTTPURL.ParseError.malformed("invalid character in host")) { try HTTPURL("https://exa mple.org/") }
        #expect(throws: HTTPURL.ParseError.malformed("invalid character in host")) { try HTTPURL("https://exämple.org/") }
        #expect(throws: HTTPURL.ParseError.malformed("invalid port")) { try HTTPURL("https://example.org:65536/") }
        #expect(throws: HTTPURL.ParseError.malformed("invalid port")) { try HTTPURL("https://example.org:-1/") }
        #expect(throws: HTTPURL.ParseError.malformed("no host")) { try HTTPURL("https://:443/") }
        #expect(throws: HTTPURL.ParseError.malformed("longer than 8192 bytes")) { try HTTPURL("https://example.org/" + String(repeating: "a", count: 8192)) }
    }

    // MARK: - Request head

    @Test("the request head: Host, the caller's fields, Content-Type, Content-Length, Connection: close, and the target")
    func requestHead() throws {
        let request = HTTPSRequest(
            method: .PUT, url: try HTTPURL("https://upload.example.org:5281/share/a%20b.txt?t=1"),
            headers: [HTTPHeaderField(name: "Authorization", value: "Bearer x")], contentType: "text/plain", contentLength: 1_048_576
        )
        let head = try request.head()
        #expect(head.method == .PUT)
        #expect(head.uri == "/share/a%20b.txt?t=1")
        #expect(head.version == .http1_1)
        #expect(
            head.headers.map { "\($0.name): \($0.value)" } == [
                "Host: upload.example.org:5281", "Authorization: Bearer x", "Content-Type: text/plain", "Content-Length: 1048576", "Connection: close",
            ]
        )
        let get = try HTTPSRequest(method: .GET, url: HTTPURL("https://example.org/a"), headers: [], contentType: nil, contentLength: nil).head()
        #expect(get.headers.map { "\($0.name): \($0.value)" } == ["Host: example.org", "Connection: close"])
    }

    @Test("fields the client sets itself, non-token names and values with CR/LF are refused", arguments: [
        HTTPHeaderField(name: "Host", value: "evil.example"),
        HTTPHeaderField(name: "content-length", value: "0"),
        HTTPHeaderField(name: "Transfer-Encoding", value: "chunked"),
        HTTPHeaderField(name: "Connection", value: "keep-alive"),
        HTTPHeaderField(name: "Content-Type", value: "text/html"),
        HTTPHeaderField(name: "Bad Name", value: "1"),
        HTTPHeaderField(name: "X-A\r\nX-B", value: "1"),
        HTTPHeaderField(name: "", value: "1"),
        HTTPHeaderField(name: "Cookie", value: "a=1\r\nHost: evil.example"),
        HTTPHeaderField(name: "Cookie", value: "a=1\nb"),
    ])
    func refusedHeaders(field: HTTPHeaderField) throws {
        let request = HTTPSRequest(method: .PUT, url: try HTTPURL("https://example.org/a"), headers: [field], contentType: nil, contentLength: 0)
        #expect(throws: HTTPSClientError.invalidHeader(name: field.name)) { try request.head() }
    }

    @Test("a content type with CR/LF is refused")
    func refusedContentType() throws {
        let request = HTTPSRequest(method: .PUT, url: try HTTPURL("https://example.org/a"), headers: [], contentType: "text/plain\r\nX: 1", contentLength: 0)
        #expect(throws: HTTPSClientError.invalidHeader(name: "Content-Type")) { try request.head() }
    }

    @Test("credentials are redacted when a field is printed")
    func redaction() {
        #expect("\(HTTPHeaderField(name: "Authorization", value: "Bearer secret"))" == "Authorization: <redacted>")
        #expect("\(HTTPHeaderField(name: "Expires", value: "never"))" == "Expires: never")
    }

    // MARK: - Response

    static func head(_ status: HTTPResponseStatus, _ fields: [(String, String)] = []) -> HTTPClientResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields)))
    }

    static func body(_ text: String) -> HTTPClientResponsePart {
        .body(ByteBuffer(string: text))
    }

    @Test("a response is complete at its end: status, reason, headers and the body in pieces")
    func response() throws {
        var collector = HTTPResponseCollector(maximumBodyBytes: 10)
        #expect(try collector.received(Self.head(.continue)) == nil)
        #expect(try collector.received(Self.head(.ok, [("Content-Length", "10")])) == nil)
        #expect(try collector.received(Self.body("01234")) == nil)
        #expect(try collector.received(Self.body("56789")) == nil)
        let response = try #require(try collector.received(.end(nil)))
        #expect(response.status == 200)
        #expect(response.reason == "OK")
        #expect(response.headers["content-length"] == ["10"])
        #expect(response.bodyBytes == Array("0123456789".utf8))
        #expect(collector.isComplete)
        #expect(throws: HTTPSClientError.malformedResponse("data after the response")) { try collector.received(.end(nil)) }
    }

    @Test("a declared Content-Length over the limit fails at the head, before any body")
    func declaredTooLarge() throws {
        var collector = HTTPResponseCollector(maximumBodyBytes: 10)
        #expect(throws: HTTPSClientError.responseTooLarge(limit: 10)) { try collector.received(Self.head(.ok, [("Content-Length", "11")])) }
        var exact = HTTPResponseCollector(maximumBodyBytes: 10)
        #expect(try exact.received(Self.head(.ok, [("Content-Length", "10")])) == nil)
    }

    @Test("a body without Content-Length fails as soon as it passes the limit")
    func readTooLarge() throws {
        var collector = HTTPResponseCollector(maximumBodyBytes: 10)
        _ = try collector.received(Self.head(.ok, [("Transfer-Encoding", "chunked")]))
        _ = try collector.received(Self.body("0123456789"))
        #expect(throws: HTTPSClientError.responseTooLarge(limit: 10)) { try collector.received(Self.body("a")) }
    }

    @Test("with requiresDelimitedBody, a 2xx body that only the connection's end delimits is refused; errors and delimited bodies pass")
    func delimitedBody() throws {
        var closeDelimited = HTTPResponseCollector(maximumBodyBytes: 10, requiresDelimitedBody: true)
        _ = try closeDelimited.received(Self.head(.ok))
        _ = try closeDelimited.received(Self.body("0123"))
        #expect(throws: HTTPSClientError.malformedResponse("a body delimited only by the end of the connection")) { try closeDelimited.received(.end(nil)) }
        var chunked = HTTPResponseCollector(maximumBodyBytes: 10, requiresDelimitedBody: true)
        _ = try chunked.received(Self.head(.ok, [("Transfer-Encoding", "Chunked")]))
        #expect(try chunked.received(.end(nil))?.status == 200)
        var notFound = HTTPResponseCollector(maximumBodyBytes: 10, requiresDelimitedBody: true)
        _ = try notFound.received(Self.head(.notFound))
        #expect(try notFound.received(.end(nil))?.status == 404)
        var lenient = HTTPResponseCollector(maximumBodyBytes: 10)
        _ = try lenient.received(Self.head(.created))
        #expect(try lenient.received(.end(nil))?.status == 201)
    }

    @Test("out-of-order parts and invalid Content-Length are malformed")
    func malformed() throws {
        var noHead = HTTPResponseCollector(maximumBodyBytes: 10)
        #expect(throws: HTTPSClientError.malformedResponse("body before the status line")) { try noHead.received(Self.body("x")) }
        var twice = HTTPResponseCollector(maximumBodyBytes: 10)
        _ = try twice.received(Self.head(.ok))
        #expect(throws: HTTPSClientError.malformedResponse("a second response head")) { try twice.received(Self.head(.ok)) }
        var invalid = HTTPResponseCollector(maximumBodyBytes: 10)
        #expect(throws: HTTPSClientError.malformedResponse("invalid Content-Length")) { try invalid.received(Self.head(.ok, [("Content-Length", "ten")])) }
    }

    @Test("a reason phrase from the peer is cut to printable ASCII, 64 characters")
    func reason() throws {
        var collector = HTTPResponseCollector(maximumBodyBytes: 10)
        let status = HTTPResponseStatus(statusCode: 599, reasonPhrase: "Too \u{1B}[31mLarge ünd" + String(repeating: "x", count: 100))
        _ = try collector.received(.head(HTTPResponseHead(version: .http1_1, status: status)))
        let response = try #require(try collector.received(.end(nil)))
        #expect(response.status == 599)
        #expect(response.reason == "Too [31mLarge nd" + String(repeating: "x", count: 48))
    }
}
