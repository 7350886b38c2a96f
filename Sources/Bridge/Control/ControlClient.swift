import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One request/response exchange with the daemon's control socket (blocking; the CLI
/// does nothing else meanwhile).
enum ControlClient {
    static func exchange(_ request: ControlRequest, path: String) -> ControlResponse? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0, var line = try? JSONEncoder().encode(request) else { return nil }
        line.append(UInt8(ascii: "\n"))
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let answer = received.prefix(while: { $0 != UInt8(ascii: "\n") })
        return try? JSONDecoder().decode(ControlResponse.self, from: Data(answer))
    }
}
