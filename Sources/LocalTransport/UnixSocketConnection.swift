import Foundation

#if canImport(Glibc)
import Glibc
import TransportCore
#endif

/// A blocking client connection to a Unix-domain socket path; the only place that builds a
/// `sockaddr_un`. Used to probe whether a socket file is live and by the `route` client.
public enum UnixSocketConnection {
    /// Why connecting failed: the `errno` value.
    public struct Failure: Error, Equatable {
        public let code: Int32
    }

    /// A connected descriptor (the caller closes it), or the errno of the failure.
    public static func connect(to path: String) -> Result<Int32, Failure> {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return .failure(Failure(code: errno)) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            return .failure(Failure(code: ENAMETOOLONG))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let failure = Failure(code: errno)
            close(descriptor)
            return .failure(failure)
        }
        return .success(descriptor)
    }
}
