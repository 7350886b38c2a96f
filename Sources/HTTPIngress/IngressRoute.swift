import TransportCore
import XMPP

/// What an HTTP ingress request asks for, from its method and path (no I/O):
///
/// - `POST /channels/{channel}`: a message (text or JSON body);
/// - `POST /hooks/alertmanager/{channel}`, `POST /hooks/grafana/{channel}`: a webhook,
///   rendered through the channel's template;
/// - `GET /messages/{id}`: where an accepted message has got to;
/// - `GET /channels/{channel}/messages`: the channel's archive (issue 25), newest first.
public enum IngressRoute: Hashable, Sendable {
    public enum WebhookKind: String, Hashable, Sendable {
        case alertmanager
        case grafana
    }

    case message(channel: String)
    case webhook(channel: String, kind: WebhookKind)
    case status(id: String)
    case history(channel: String)

    /// The route for `method` and `path` (without the query), or why there is none.
    public static func match(method: String, path: String) -> Result<IngressRoute, IngressError> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard path.hasPrefix("/"), !segments.isEmpty else { return .failure(.notFound("no such path: \(path)")) }
        let decoded = segments.map { PercentEncoding.decode($0) ?? "\u{0}" }
        // A segment that does not decode, or decodes to a separator or control character,
        // names nothing.
        if decoded.contains(where: { $0.contains("/") || $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }) {
            return .failure(.notFound("no such path: \(path)"))
        }
        let route: IngressRoute
        let allowed: String
        switch decoded.count {
        case 2 where decoded[0] == "channels" && !decoded[1].isEmpty:
            route = .message(channel: decoded[1])
            allowed = "POST"
        case 3 where decoded[0] == "channels" && !decoded[1].isEmpty && decoded[2] == "messages":
            route = .history(channel: decoded[1])
            allowed = "GET"
        case 3 where decoded[0] == "hooks" && !decoded[2].isEmpty:
            guard let kind = WebhookKind(rawValue: decoded[1]) else {
                return .failure(.notFound("no webhook '\(decoded[1])'; use /hooks/alertmanager/{channel} or /hooks/grafana/{channel}"))
            }
            route = .webhook(channel: decoded[2], kind: kind)
            allowed = "POST"
        case 2 where decoded[0] == "messages" && !decoded[1].isEmpty:
            route = .status(id: decoded[1])
            allowed = "GET"
        default:
            return .failure(.notFound("no such path: \(path)"))
        }
        guard method == allowed || (allowed == "GET" && method == "HEAD") else { return .failure(.methodNotAllowed(allowed)) }
        return .success(route)
    }
}

extension IngressRoute {
    /// The methods a path takes (the `Allow` header of a 405, RFC 9110 §15.5.6); nil for
    /// a path that names nothing.
    public static func allowedMethods(path: String) -> String? {
        switch Self.match(method: "POST", path: path) {
        case .success: return "POST"
        case .failure(let error) where error.status == 405: return "GET, HEAD"
        case .failure: return nil
        }
    }
}
