import Foundation
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway ejabberd (24.12 from bookworm-backports) in a temporary directory, the
/// second real server of the integration tests (issue 13): loopback only, random free
/// ports (STARTTLS, Direct TLS, and the Erlang distribution port, so no `epmd` daemon is
/// started), a self-signed certificate made at start, accounts made with `ejabberdctl`,
/// stream management, MAM, carbons and a MUC service with archived rooms. Its data is in
/// SQLite (`default_db: sql`), as ejabberd recommends for small servers: its Mnesia
/// archive loses its last writes when the server is killed.
///
/// `ejabberdctl` runs the server as the `ejabberd` user, so the tests must run as root (as
/// CI does) and the directory is handed to that user. Only the process this object started
/// is signalled, by its pid (after a clean `ejabberdctl stop`).
public final class EjabberdServer: TestXMPPServer, @unchecked Sendable {
    public let domain: String
    public let directory: String
    public private(set) var c2sPort: Int = 0
    public private(set) var directTLSPort: Int = 0
    private var distributionPort: Int = 0
    /// The component listener's port (with components), else 0.
    public private(set) var componentPort: Int = 0
    private var components: [String: String] = [:]
    /// `mod_last` (XEP-0012, the server's uptime) and `mod_version` (XEP-0092).
    private var serverInfo = true
    public let certificate: SelfSignedCertificate?
    private let node: String
    private var process: ChildProcess?

    public var mucDomain: String { "muc." + self.domain }

    /// What is missing to run ejabberd here: the commands, or root.
    public static func missingPrerequisites() -> [String] {
        var missing = ["ejabberdctl", "openssl", "sqlite3"].filter { Subprocess.which($0) == nil }
        // Its data is in SQLite (below): ejabberd's driver for it is a package of its own.
        let drivers = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/erlang/lib")) ?? []
        if !drivers.contains(where: { $0.hasPrefix("p1_sqlite3-") }) { missing.append("erlang-p1-sqlite3") }
        if getuid() != 0 { missing.append("root (ejabberdctl runs ejabberd as the ejabberd user)") }
        return missing
    }

    /// ``start(domain:accounts:components:serverInfo:)`` on a thread of its own: ejabberd's
    /// start and `ejabberdctl register` take seconds, which must not hold one of the few
    /// threads async tests share.
    public static func started(
        domain: String = "example.test", accounts: [(String, String)] = [], components: [String: String] = [:], serverInfo: Bool = true
    ) async throws -> EjabberdServer {
        try await Subprocess.offThread { try EjabberdServer.start(domain: domain, accounts: accounts, components: components, serverInfo: serverInfo) }
    }

    /// Creates the directory, certificate and configuration, starts ejabberd and registers
    /// these accounts (`(localpart, password)`).
    /// - Parameter components: external components (XEP-0114), domain → secret, on
    ///   ``componentPort``; each may read and write users' rosters (XEP-0356, `mod_privilege`).
    /// - Parameter serverInfo: load `mod_last` and `mod_version` (operators may not).
    public static func start(
        domain: String = "example.test", accounts: [(String, String)] = [], components: [String: String] = [:], serverInfo: Bool = true
    ) throws -> EjabberdServer {
        let missing = self.missingPrerequisites()
        guard missing.isEmpty else {
            throw Subprocess.Failure(command: "ejabberd", status: 127, output: "missing \(missing.joined(separator: ", ")); install with: scripts/install-prerequisites.sh test")
        }
        let server = try EjabberdServer(domain: domain)
        server.components = components
        server.serverInfo = serverInfo
        try server.launch(pickPorts: true)
        for (user, password) in accounts {
            try server.register(user, password: password)
        }
        return server
    }

    private init(domain: String) throws {
        self.domain = domain
        var template = Array("/tmp/xmpp-bridge-ejabberd-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else {
            throw Subprocess.Failure(command: "mkdtemp", status: errno, output: String(cString: strerror(errno)))
        }
        self.directory = String(cString: path)
        // Unique like the directory (mkdtemp's random suffix), in the characters a node name takes.
        let suffix = String(self.directory.split(separator: "-").last ?? "0").map { $0.isLetter || $0.isNumber ? $0 : "x" }
        self.node = "xmppbridge\(getpid())x\(String(suffix))@localhost"
        let certs = "\(self.directory)/certs"
        let certificate = try SelfSignedCertificate.make(
            name: domain, in: certs, subjectAltName: "DNS:\(domain),DNS:muc.\(domain)"
        )
        // ejabberd reads certificate and key from one file.
        let combined = try String(contentsOfFile: certificate.certificateFile, encoding: .utf8)
            + String(contentsOfFile: certificate.privateKeyFile, encoding: .utf8)
        try combined.write(toFile: "\(certs)/server.pem", atomically: true, encoding: .utf8)
        self.certificate = certificate
        for folder in ["logs", "spool"] {
            try FileManager.default.createDirectory(atPath: "\(self.directory)/\(folder)", withIntermediateDirectories: true)
        }
        try "{lookup, [file, native]}.\n".write(toFile: "\(self.directory)/inetrc", atomically: true, encoding: .utf8)
    }

    deinit {
        self.process?.terminate(timeout: 1)
    }

    /// Creates an account with `ejabberdctl register` (the server must run).
    public func register(_ user: String, password: String) throws {
        try self.control(["register", user, self.domain, password])
    }

    /// Ends a user's sessions from the server's side (`ejabberdctl kick_user`): the
    /// streams are closed and the sessions are gone, so they cannot be resumed.
    public func kickUser(_ user: String) throws {
        try self.control(["kick_user", user, self.domain])
    }

    /// Stops ejabberd (`ejabberdctl stop`, then SIGTERM/SIGKILL to our child) and waits.
    public func stop() {
        guard let process = self.process else { return }
        _ = try? self.control(["stop"])
        if !process.wait(timeout: 10) { process.terminate() }
        self.process = nil
    }

    /// Kills ejabberd at once (SIGKILL to the Erlang VM, found by this instance's unique
    /// node name, and to our child), as a crash would.
    public func kill() {
        guard let process = self.process else { return }
        let listing = (try? Subprocess.run("pgrep", ["-f", "--", self.node])) ?? ""
        for pid in listing.split(separator: "\n").compactMap({ Int32($0) }) where pid != getpid() {
            Glibc.kill(pid, SIGKILL)
        }
        process.signal(SIGKILL)
        process.terminate(timeout: 5)
        self.process = nil
    }

    /// Starts ejabberd again on the same ports with the same data.
    public func restart() throws {
        self.stop()
        try self.launch(pickPorts: false)
    }

    /// Stops ejabberd and deletes its directory (kept, and its path printed, when
    /// `XMPP_BRIDGE_TEST_KEEP_DIRECTORIES` is set, as Prosody's is).
    public func shutdown() {
        self.stop()
        if ProcessInfo.processInfo.environment["XMPP_BRIDGE_TEST_KEEP_DIRECTORIES"] != nil {
            print("[kept] \(self.directory)")
            return
        }
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// The bodies ejabberd's archive (XEP-0313, its SQLite `archive` table) holds for
    /// `owner`: a user's localpart, or a room's bare JID. What is there the server took; the
    /// fault tests tell by it what ejabberd lost itself from what the bridge lost.
    public func archivedBodies(of owner: String) throws -> Set<String>? {
        let quoted = "'" + owner.replacingOccurrences(of: "'", with: "''") + "'"
        let output = try Subprocess.run(
            "sqlite3", ["-readonly", "-cmd", ".timeout 5000", "\(self.directory)/spool/ejabberd.db", "SELECT txt FROM archive WHERE username = \(quoted);"]
        )
        return Set(output.split(separator: "\n").map(String.init))
    }

    public func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: "\(self.directory)/logs/ejabberd.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    // MARK: -

    /// `ejabberdctl` with this instance's folders and node.
    @discardableResult
    private func control(_ arguments: [String]) throws -> String {
        try Subprocess.run("ejabberdctl", self.folderArguments + arguments)
    }

    private var folderArguments: [String] {
        [
            "--config-dir", self.directory, "--config", "\(self.directory)/ejabberd.yml", "--ctl-config", "\(self.directory)/ejabberdctl.cfg",
            "--logs", "\(self.directory)/logs", "--spool", "\(self.directory)/spool",
        ]
    }

    private func launch(pickPorts: Bool) throws {
        try ServerLaunch.retrying(
            server: "ejabberd", pickPorts: pickPorts,
            choosePorts: {
                let ports = try ProsodyServer.freeLoopbackPorts(count: 4)
                (self.c2sPort, self.directTLSPort, self.distributionPort) = (ports[0], ports[1], ports[2])
                self.componentPort = self.components.isEmpty ? 0 : ports[3]
            },
            start: {
                try self.writeConfig()
                try self.launchOnce()
            },
            stop: { self.stop() }
        )
    }

    private func launchOnce() throws {
        let process = try ChildProcess(
            executable: Subprocess.which("ejabberdctl") ?? "/usr/sbin/ejabberdctl",
            arguments: self.folderArguments + ["foreground"],
            logFile: "\(self.directory)/ejabberd.stdout"
        )
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else {
                throw Subprocess.Failure(command: "ejabberd", status: 1, output: "exited during start-up\n" + self.logTail())
            }
            if [self.c2sPort, self.directTLSPort, self.componentPort].filter({ $0 != 0 }).allSatisfy(ProsodyServer.acceptsConnections) { return }
            usleep(50_000)
        }
        throw Subprocess.Failure(command: "ejabberd", status: 1, output: "not ready after 30 s\n" + self.logTail())
    }

    private func writeConfig() throws {
        var service = ""
        var privileged = ""
        if !self.components.isEmpty {
            service = "  - port: \(self.componentPort)\n    ip: \"127.0.0.1\"\n    module: ejabberd_service\n    hosts:\n"
            for (domain, secret) in self.components.sorted(by: { $0.key < $1.key }) {
                service += "      \"\(domain)\":\n        password: \"\(secret)\"\n"
            }
            privileged = "  mod_privilege:\n    roster:\n      both: gateways\n"
        }
        let gatewayACL = self.components.keys.sorted().map { "      - \"\($0)\"" }.joined(separator: "\n")
        let config = """
            # Generated by xmpp-bridge's test harness. Nothing from /etc/ejabberd is used.
            hosts:
              - \(self.domain)
            loglevel: info
            certfiles:
              - \(self.directory)/certs/server.pem
            acme:
              auto: false
            listen:
              - port: \(self.c2sPort)
                ip: "127.0.0.1"
                module: ejabberd_c2s
                starttls_required: true
              - port: \(self.directTLSPort)
                ip: "127.0.0.1"
                module: ejabberd_c2s
                tls: true
            \(service)auth_method: sql
            default_db: sql
            sql_type: sqlite
            sql_database: "\(self.directory)/spool/ejabberd.db"
            update_sql_schema: true
            auth_password_format: scram
            acl:
              local:
                user_regexp: ""
            \(gatewayACL.isEmpty ? "" : "  gateways:\n    server:\n" + gatewayACL + "\n")access_rules:
              local:
                allow: local
              gateways:
                allow: \(gatewayACL.isEmpty ? "local" : "gateways")
            modules:
              mod_roster:
                versioning: true
              mod_disco: {}
              mod_ping: {}
              mod_stream_mgmt: {}
              mod_carboncopy: {}
              mod_mam:
                default: always
              mod_offline: {}
              mod_auth_fast: {}
              mod_pubsub:
                plugins:
                  - flat
                  - pep
            \(self.serverInfo ? "  mod_last: {}\n  mod_version: {}\n" : "")  mod_caps: {}
            \(privileged)  mod_muc:
                host: "\(self.mucDomain)"
                access_create: local
                access_mam: all
                default_room_options:
                  mam: true
                  persistent: true

            """
        try config.write(toFile: "\(self.directory)/ejabberd.yml", atomically: true, encoding: .utf8)
        // The Erlang distribution on its own loopback port: no epmd daemon left behind.
        let control = """
            ERLANG_NODE=\(self.node)
            ERL_DIST_PORT=\(self.distributionPort)
            ERL_EPMD_ADDRESS=127.0.0.1
            INET_DIST_INTERFACE=127.0.0.1

            """
        try control.write(toFile: "\(self.directory)/ejabberdctl.cfg", atomically: true, encoding: .utf8)
        try Subprocess.run("chown", ["-R", "ejabberd", self.directory])
    }
}
