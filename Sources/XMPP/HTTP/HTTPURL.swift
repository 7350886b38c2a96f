/// An absolute `https` (or, only where allowed, `http`) URL taken apart for one request
/// (RFC 9110 §4.2; RFC 3986 §3): host, port and request target.
///
/// Parsing is strict, because the URLs come from peers (XEP-0363 slots): no user info, a
/// host of letters, digits, `-`, `.` and `_` (or a bracketed IPv6 address), a port in
/// 1…65535, and no control characters anywhere. Bytes outside ASCII and spaces in the
/// path or query are percent-encoded; the fragment is dropped (never sent, RFC 9110 §4.2.4).
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Hashable, Sendable {
        case http
        case https

        var defaultPort: Int {
            switch self {
            case .http: 80
            case .https: 443
            }
        }
    }

    /// Why a text is not a URL we request.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The scheme is neither `https` nor `http`.
        case unsupportedScheme(String)
        /// `http` without ``HTTPURL/init(_:allowInsecureHTTP:)``'s `allowInsecureHTTP`.
        case insecureHTTP
        /// Not a well-formed absolute URL; the reason names the part.
        case malformed(String)

        public var description: String {
            switch self {
            case .unsupportedScheme(let scheme): "unsupported URL scheme '\(scheme.prefix(16))' (only https)"
            case .insecureHTTP: "plain http URL refused (only https)"
            case .malformed(let reason): "malformed URL: \(reason)"
            }
        }
    }

    public var scheme: Scheme
    /// The host in lower case; an IPv6 address without its brackets.
    public var host: String
    public var port: Int
    /// Path and query, starting with `/` (the request target, RFC 9112 §3.2.1).
    public var target: String

    /// The longest URL accepted, in bytes.
    public static let maximumLength = 8 * 1024

    public init(_ text: String, allowInsecureHTTP: Bool = false) throws(ParseError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else { throw .malformed("longer than \(Self.maximumLength) bytes") }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: Array("://".utf8))
        else { throw .malformed("not an absolute URL") }
        let schemeText = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else { throw .unsupportedScheme(schemeText) }
        if scheme == .http, !allowInsecureHTTP { throw .insecureHTTP }
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        let (host, port) = try Self.authority(bytes[authorityStart..<authorityEnd], scheme: scheme)
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = try Self.target(bytes[authorityEnd...])
    }

    /// The `Host` header field value (RFC 9110 §7.2): the host, bracketed if IPv6, with
    /// the port when it is not the scheme's default.
    public var hostHeader: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return self.port == self.scheme.defaultPort ? host : "\(host):\(self.port)"
    }

    public var description: String {
        "\(self.scheme.rawValue)://\(self.hostHeader)\(self.target)"
    }

    // MARK: -

    private static func authority(_ bytes: ArraySlice<UInt8>, scheme: Scheme) throws(ParseError) -> (String, Int) {
        guard !bytes.contains(UInt8(ascii: "@")) else { throw .malformed("user info is not allowed") }
        var hostBytes = bytes
        var portBytes: ArraySlice<UInt8> = []
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { throw .malformed("unclosed IPv6 address") }
            hostBytes = bytes[(bytes.startIndex + 1)..<close]
            let rest = bytes[(close + 1)...]
            if let first = rest.first {
                guard first == UInt8(ascii: ":") else { throw .malformed("junk after the IPv6 address") }
                portBytes = rest.dropFirst()
            }
            guard !hostBytes.isEmpty, hostBytes.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }),
                hostBytes.contains(UInt8(ascii: ":"))
            else { throw .malformed("invalid IPv6 address") }
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = bytes[..<colon]
            portBytes = bytes[(colon + 1)...]
        }
        guard !hostBytes.isEmpty else { throw .malformed("no host") }
        guard hostBytes.count <= 253 else { throw .malformed("host longer than 253 bytes") }
        if bytes.first != UInt8(ascii: "[") {
            guard hostBytes.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }) else {
                throw .malformed("invalid character in host")
            }
        }
        var port = scheme.defaultPort
        if !portBytes.isEmpty {
            guard portBytes.count <= 5, portBytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let value = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(value)
            else { throw .malformed("invalid port") }
            port = value
        }
        return (String(decoding: hostBytes, as: UTF8.self).lowercased(), port)
    }

    private static func target(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> String {
        var target = ""
        if bytes.first != UInt8(ascii: "/") { target = "/" }
        for byte in bytes {
            if byte == UInt8(ascii: "#") { break }
            switch byte {
            case 0x00...0x1F, 0x7F:
                throw .malformed("control character in path or query")
            case 0x20, 0x80...0xFF:
                let hex = Array("0123456789ABCDEF".utf8)
                target.unicodeScalars.append("%")
                target.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                target.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            default:
                target.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return target
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
