import TransportCore

/// Where an HTTP listener (the HTTP ingress, the metrics endpoint) accepts connections:
/// `host:port` (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`) or a Unix-domain socket
/// path (`/run/xmpp-bridge/http.sock`, or `unix:` and a path).
public enum HTTPListenAddress: Hashable, Sendable, CustomStringConvertible {
    case host(String, port: Int)
    case unixSocket(String)

    /// Parses the `listen` setting; nil when it is neither form.
    public init?(_ text: String) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { return nil }
            self = .unixSocket(path)
            return
        }
        if text.hasPrefix("/") || text.hasPrefix("./") {
            self = .unixSocket(text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            // An IPv6 address needs brackets, else its last group would read as the port.
            return nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        self = .host(host, port: port)
    }

    /// Reachable only from this machine: a Unix socket, `localhost`, 127.0.0.0/8 or ::1.
    public var isLocalOnly: Bool {
        switch self {
        case .unixSocket: return true
        case .host(let host, _):
            if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
        }
    }

    public var description: String {
        switch self {
        case .host(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unixSocket(let path): path
        }
    }
}
