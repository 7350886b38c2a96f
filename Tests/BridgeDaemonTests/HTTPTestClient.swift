import Foundation
import IntegrationSupport

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client for the ingress and metrics tests: one request per
/// connection (`Connection: close`) over TCP to 127.0.0.1 or a Unix socket, read with
/// non-blocking polls so the awaiting task never blocks a thread.
struct HTTPTestClient {
    struct Reply: CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: String

        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(self.body.utf8))) as? [String: Any] }
        var description: String { "\(self.status) \(self.body)" }
    }

    enum Target {
        case tcp(port: Int)
        case unix(path: String)
    }

    let target: Target

    func request(
        _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [], timeout: Duration = .seconds(30)
    ) async throws -> Reply {
        let descriptor = try self.connect()
        defer { close(descriptor) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        let deadline = ContinuousClock.now + timeout
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                guard ContinuousClock.now < deadline else { throw TestFailure("HTTP write timed out") }
                try await Task.sleep(for: .milliseconds(2))
            } else if errno == EPIPE || errno == ECONNRESET {
                break  // The server answered early (413) and closed; read its answer.
            } else {
                throw TestFailure("HTTP write: \(String(cString: strerror(errno)))")
            }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
            } else if count == 0 || errno == ECONNRESET {
                break
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                guard ContinuousClock.now < deadline else { throw TestFailure("HTTP answer timed out; got \(received.count) bytes") }
                try await Task.sleep(for: .milliseconds(2))
            } else {
                throw TestFailure("HTTP read: \(String(cString: strerror(errno)))")
            }
        }
        return try Self.parse(received)
    }

    func post(_ path: String, token: String? = nil, headers: [String: String] = [:], body: String) async throws -> Reply {
        var all = headers
        if let token { all["Authorization"] = "Bearer \(token)" }
        return try await self.request("POST", path, headers: all, body: Array(body.utf8))
    }

    func get(_ path: String, token: String? = nil) async throws -> Reply {
        try await self.request("GET", path, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    private func connect() throws -> Int32 {
        let descriptor: Int32
        let result: Int32
        switch self.target {
        case .tcp(let port):
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .unix(let path):
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestFailure("HTTP connect: \(reason)")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return descriptor
    }

    /// Status line, headers, and the body (whole, or de-chunked).
    static func parse(_ bytes: [UInt8]) throws -> Reply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...(max(0, bytes.count - 4))).first(where: { bytes.count >= 4 && Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw TestFailure("no HTTP head in \(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self))")
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw TestFailure("bad status line: \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoded: [UInt8] = []
            var rest = body[...]
            while let lineEnd = rest.firstIndex(of: UInt8(ascii: "\r")), let size = Int(String(decoding: rest[rest.startIndex..<lineEnd], as: UTF8.self), radix: 16), size > 0 {
                let start = lineEnd + 2
                decoded += rest[start..<min(start + size, rest.endIndex)]
                rest = rest[min(start + size + 2, rest.endIndex)...]
            }
            body = decoded
        }
        return Reply(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }
}
