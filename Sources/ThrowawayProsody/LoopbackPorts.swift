import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Free TCP ports on 127.0.0.1 for throwaway servers, chosen **below the kernel's
/// ephemeral range** (`/proc/sys/net/ipv4/ip_local_port_range`).
///
/// A port the kernel hands out for `bind(0)` comes from that range, the same range it takes
/// source ports of outgoing connections from: between the pick and the server's own bind
/// (seconds for `initdb`), any connection on the machine may take it. Below the range only
/// a listener can: the bind test sees one that is there already, not one that comes after
/// it (another process's server; PostgreSQL's first start then picks again). Each port is
/// handed out once per process, so two servers of one test run never get the same one.
public enum LoopbackPorts {
    /// Ports handed out by this process.
    private static let issued = Mutex<Set<Int>>([])

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    static func ephemeralStart() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) }
        return first ?? 32768
    }

    /// `count` distinct ports nothing listens on, from 12000 up to the ephemeral range.
    public static func pick(count: Int) throws -> [Int] {
        // Below the ephemeral range; if that starts very low, the 1,000 ports above 12000.
        let range = 12000..<max(ephemeralStart(), 13000)
        var ports: [Int] = []
        var attempts = 0
        while ports.count < count {
            attempts += 1
            guard attempts < 10_000 else {
                throw Subprocess.Failure(command: "bind", status: EADDRINUSE, output: "no free loopback port in \(range)")
            }
            let port = Int.random(in: range)
            let fresh = self.issued.withLock { issued in issued.insert(port).inserted }
            guard fresh else { continue }
            if self.bindable(port) { ports.append(port) }
        }
        return ports
    }

    /// Whether a socket can bind 127.0.0.1:`port` now (released at once).
    private static func bindable(_ port: Int) -> Bool {
        self.withLoopbackSocket(port) { fd, address, length in bind(fd, address, length) == 0 }
    }

    /// `body` with a new TCP socket and the address 127.0.0.1:`port` (the socket closed
    /// after); false when no socket can be made.
    static func withLoopbackSocket(_ port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
