import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The datagram socket to systemd's `$NOTIFY_SOCKET` (sd_notify(3)): owns its file
/// descriptor and closes it. A path starting with `@` is in the abstract namespace.
package final class NotifySocket: @unchecked Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    private let descriptor: Int32
    private var address: sockaddr_un
    private let length: socklen_t
    private let lock = NSLock()

    package init(path: String) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, bytes.first == UInt8(ascii: "/") || abstract else {
            throw Failure(description: "NOTIFY_SOCKET '\(path)' is not a socket path")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket(): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        self.address = address
        // An abstract address is as long as its bytes; a path one includes its terminator.
        self.length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
    }

    deinit {
        close(self.descriptor)
    }

    /// Sends one notification (`READY=1`, `WATCHDOG=1`, …).
    package func send(_ message: String) throws(Failure) {
        let bytes = Array(message.utf8)
        let sent = self.lock.withLock {
            withUnsafePointer(to: &self.address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bytes.withUnsafeBytes { sendto(self.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, self.length) }
                }
            }
        }
        guard sent == bytes.count else { throw Failure(description: "sendto(NOTIFY_SOCKET): \(String(cString: strerror(errno)))") }
    }
}
