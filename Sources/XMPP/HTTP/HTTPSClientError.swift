/// Why an ``HTTPSClient`` request failed (RFC 9110, RFC 9112; TLS per RFC 9110 §4.3.4).
public enum HTTPSClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The URL was refused before anything was sent.
    case invalidURL(HTTPURL.ParseError)
    /// A request header field is not allowed (a name we set ourselves, a name that is not
    /// a token, a value with control characters).
    case invalidHeader(name: String)
    /// No TCP connection to the host (refused, unreachable, no address, timed out).
    case connectFailed(host: String, port: Int, reason: String)
    /// TLS failed: the certificate was rejected (chain or name) or the handshake broke.
    case tls(TLSError)
    /// The whole request took longer than ``HTTPSClient/Configuration/requestTimeout``.
    case timedOut(host: String)
    /// The server answered with a status outside 2xx.
    case unexpectedStatus(code: Int, reason: String, host: String)
    /// The response body is longer than the limit (declared by `Content-Length`, or read).
    case responseTooLarge(limit: Int)
    /// The response is not valid HTTP/1.1.
    case malformedResponse(String)
    /// The connection ended (or failed) before a complete response.
    case connectionClosed(host: String, reason: String?)
    /// The task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .invalidURL(let error): "\(error)"
        case .invalidHeader(let name): "request header '\(name.prefix(64))' not allowed"
        case .connectFailed(let host, let port, let reason): "cannot connect to \(host):\(port): \(reason)"
        case .tls(let error): "\(error)"
        case .timedOut(let host): "request to \(host) timed out"
        case .unexpectedStatus(let code, let reason, let host): "\(host) answered HTTP \(code) \(reason)"
        case .responseTooLarge(let limit): "response body larger than \(limit) bytes"
        case .malformedResponse(let reason): "malformed HTTP response: \(reason)"
        case .connectionClosed(let host, let reason): "connection to \(host) ended before a complete response" + (reason.map { ": \($0)" } ?? "")
        case .cancelled: "request cancelled"
        }
    }
}
