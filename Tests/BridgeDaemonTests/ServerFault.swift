import Foundation
import IntegrationSupport
import TestServers
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A fault on the server's side, as the fault matrix injects it into a running server
/// (``FaultScene``): each works on Prosody and on ejabberd, and touches only what the test
/// started (the server by its pid or node name, the bridge's own connections by port).
enum ServerFault: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The server ends the bridge's sessions itself: Prosody's admin console `c2s:close`,
    /// ejabberd's `kick_user`. The streams are closed and the sessions are gone.
    case streamsClosed = "streams closed"
    /// The bridge's TCP connections are reset on the server's side (`ss -K`), no stream
    /// close: the sessions hibernate and can be resumed.
    case connectionsDropped = "TCP dropped"
    /// The server is killed (SIGKILL) and started again on the same ports and data.
    case killed = "killed -9"
    /// The server is stopped cleanly (SIGTERM, `ejabberdctl stop`) and started again.
    case restarted = "stopped and started"

    var description: String { self.rawValue }

    /// Injects the fault; `accounts` are the bridge's account localparts (resource
    /// `bridge`), `bridgePID` the bridge process.
    func inject(on server: any TestXMPPServer, accounts: [String], bridgePID: Int32) async throws {
        switch self {
        case .streamsClosed:
            if let prosody = server as? ProsodyServer {
                // Each account's session is closed once it is bound: one may be between
                // connections on its own (under load an acknowledgement comes late and the
                // watchdog drops the link; a resumed or new stream is bound only after its
                // `<resume/>` or `<bind/>`), and `c2s close` finds only bound sessions.
                for account in accounts {
                    var last = ""
                    let closed = try await eventuallyValue(timeout: .seconds(15), every: .milliseconds(250)) { () -> String? in
                        last = try prosody.shell(["c2s", "close", "\(account)@\(server.domain)/bridge"])
                        return last.contains("1 session") ? last : nil
                    }
                    guard closed != nil else { throw TestFailure("prosodyctl shell c2s close found no session of \(account) for 15 s: \(last)") }
                }
            } else if let ejabberd = server as? EjabberdServer {
                for account in accounts { try ejabberd.kickUser(account) }
            } else {
                throw TestFailure("no way to close the streams on \(type(of: server))")
            }
        case .connectionsDropped:
            // Every account's connection is up first (one may be reconnecting on its own:
            // ejabberd under a burst answers `<r/>` late, and ack_timeout drops the link).
            let ports = await eventuallyValue(timeout: .seconds(15)) { () -> [Int]? in
                let ports = (try? Self.connections(of: bridgePID, toPort: server.c2sPort)) ?? []
                return ports.count == accounts.count ? ports : nil
            }
            guard let ports else { throw TestFailure("the bridge does not have a connection per account to reset") }
            for local in ports {
                _ = try Subprocess.run("ss", ["-K", "( sport = :\(local) or dport = :\(local) )"])
            }
        case .killed:
            if let prosody = server as? ProsodyServer {
                prosody.kill()
            } else if let ejabberd = server as? EjabberdServer {
                ejabberd.kill()
            } else {
                throw TestFailure("no way to kill \(type(of: server))")
            }
            try server.restart()
        case .restarted:
            try server.restart()
        }
    }

    /// The local ports of process `pid`'s established TCP connections to 127.0.0.1:`port`;
    /// each is reset at both ends with `ss -K` (the kernel's SOCK_DESTROY): each side sees
    /// its connection aborted, no stream close.
    static func connections(of pid: Int32, toPort port: Int) throws -> [Int] {
        let listing = try Subprocess.run("ss", ["-tnpH", "state", "established", "( dport = :\(port) )"])
        let localPorts = listing.split(separator: "\n").filter { $0.contains("pid=\(pid),") }.compactMap { line -> Int? in
            // "0 0 127.0.0.1:LOCAL 127.0.0.1:PORT users:((…))": the third column's port.
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 4, let colon = columns[2].lastIndex(of: ":") else { return nil }
            return Int(columns[2][columns[2].index(after: colon)...])
        }
        return localPorts
    }
}
