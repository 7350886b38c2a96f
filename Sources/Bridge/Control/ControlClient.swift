import Foundation
import LocalTransport
import TransportCore

#if canImport(Glibc)
import Glibc
#endif

/// One request/response exchange with the daemon's control socket (blocking; the CLI
/// does nothing else meanwhile).
package enum ControlClient {
    package static func exchange(_ request: ControlRequest, path: String) -> ControlResponse? {
        guard case .success(let descriptor) = UnixSocketConnection.connect(to: path) else { return nil }
        defer { close(descriptor) }
        guard var line = try? JSONEncoder().encode(request) else { return nil }
        line.append(UInt8(ascii: "\n"))
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Only the newest chunk is searched for the end of the line (a long `history`
        // answer is many chunks).
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
            if buffer[0..<count].contains(UInt8(ascii: "\n")) { break }
        }
        let answer = received.prefix(while: { $0 != UInt8(ascii: "\n") })
        return try? JSONDecoder().decode(ControlResponse.self, from: Data(answer))
    }
}
