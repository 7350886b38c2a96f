import NIOHTTP1

/// One request as ``HTTPSClient`` sends it (RFC 9112 §3; RFC 9110 §7.2, §8.3, §8.6): a
/// `Host` field from the URL, the caller's fields, `Content-Type` and `Content-Length`
/// when there is a body, and `Connection: close` (one request per connection, so the end
/// of the response is the end of the connection).
///
/// Pure: checks the caller's fields and builds the head.
struct HTTPSRequest: Sendable {
    /// Fields the client writes itself (or must never write); a caller's field with one of
    /// these names is refused.
    static let reservedNames: Set<String> = [
        "host", "content-length", "content-type", "transfer-encoding", "connection", "keep-alive", "proxy-connection",
        "te", "trailer", "upgrade", "expect",
    ]

    var method: HTTPMethod
    var url: HTTPURL
    var headers: [HTTPHeaderField]
    var contentType: String?
    /// The body's length; nil for a request without a body.
    var contentLength: Int?

    /// The request head, or the first field that may not be sent.
    func head() throws(HTTPSClientError) -> HTTPRequestHead {
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: self.url.hostHeader)
        for field in self.headers {
            guard HTTPHeaderField.isValidName(field.name), HTTPHeaderField.isValidValue(field.value),
                !Self.reservedNames.contains(field.name.lowercased())
            else { throw .invalidHeader(name: field.name) }
            fields.add(name: field.name, value: field.value)
        }
        if let contentType = self.contentType {
            guard HTTPHeaderField.isValidValue(contentType), !contentType.isEmpty else { throw .invalidHeader(name: "Content-Type") }
            fields.add(name: "Content-Type", value: contentType)
        }
        if let contentLength = self.contentLength {
            fields.add(name: "Content-Length", value: String(contentLength))
        }
        fields.add(name: "Connection", value: "close")
        return HTTPRequestHead(version: .http1_1, method: self.method, uri: self.url.target, headers: fields)
    }
}
