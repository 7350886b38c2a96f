import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway Prosody (0.12 from Debian's `prosody`, or 13: ``ProsodyRelease``) in a temporary directory,
/// listening on loopback only, on random free ports, with self-signed certificates made
/// at start. Used by the integration tests, the benchmarks and `xmpp-bridge demo`.
///
/// Only the process this object started is ever signalled, by its pid.
public final class ProsodyServer: @unchecked Sendable {
    /// How the server is set up.
    public struct Options: Sendable {
        public var domain: String = "example.test"
        /// Which Prosody runs (``ProsodyRelease/testDefault`` unless set).
        public var release: ProsodyRelease = .testDefault
        /// Offer STARTTLS (required) and Direct TLS. When false: no TLS at all, PLAIN in clear.
        public var tls: Bool = true
        /// Present a certificate for this name instead of the domain (to test name checks).
        public var certificateName: String?
        /// In-band registration (XEP-0077).
        public var registration: Bool = false
        /// Message archive (XEP-0313), which dominates Prosody's per-message cost.
        public var archive: Bool = false
        /// `SHA-256` makes Prosody offer SCRAM-SHA-256 (and not SCRAM-SHA-1).
        public var passwordHash: String = "SHA-256"
        public var stanzaSizeLimit: Int?
        /// How long a stream management session waits to be resumed (`smacks_hibernation_time`;
        /// Prosody's default is 600 s).
        public var hibernationSeconds: Int?
        /// The admin console (`mod_admin_shell`), for ``shell(_:)``.
        public var adminShell: Bool = false
        /// `mod_uptime` (XEP-0012 for the server) and `mod_version` (XEP-0092): Debian's
        /// example configuration loads both, operators often switch them off.
        public var serverInfo: Bool = true
        /// A MUC component (XEP-0045) on ``ProsodyServer/mucDomain`` with its archive
        /// (`mod_muc_mam`, XEP-0313 on the room JID): any local user creates a room by joining
        /// it, unlocked at once (no configuration step), persistent, public, archived.
        /// An internal component: no port, no certificate of its own.
        public var rooms: Bool = false
        /// An HTTP File Upload component (XEP-0363, `mod_http_file_share`) on
        /// ``ProsodyServer/uploadDomain`` taking files up to this many bytes
        /// (`http_file_share_size_limit`), served over HTTPS on ``ProsodyServer/httpsPort``
        /// (127.0.0.1) with the test certificate, which then names the upload domain too.
        /// Needs ``tls``. nil: no upload service and no HTTP listener.
        public var fileShareSizeLimit: Int?
        /// The host name of the upload service's URLs (`http_host`), when not its domain:
        /// `localhost` lets a client that only has the system resolver (the `send` command)
        /// reach it on loopback. The certificate names it too.
        public var fileShareHTTPHost: String?
        public var logLevel: String = "info"
        /// External components (XEP-0114): domain → shared secret, served on
        /// ``ProsodyServer/componentPort`` (127.0.0.1).
        public var components: [String: String] = [:]
        /// SASL2 (XEP-0388) with Bind 2 (XEP-0386), inline stream management, FAST
        /// (XEP-0484) and SCRAM downgrade protection (XEP-0474): the community modules Debian
        /// packages for Prosody 13 (`prosody-modules`); 13 only.
        public var sasl2: Bool = false

        public init() {}
    }

    public let options: Options
    public let directory: String
    public var domain: String { self.options.domain }
    /// The MUC component's domain (with ``Options/rooms``): `muc.` + the domain.
    public var mucDomain: String { "muc." + self.options.domain }
    /// The upload component's domain (with ``Options/fileShareSizeLimit``): `upload.` + the domain.
    public var uploadDomain: String { "upload." + self.options.domain }
    public private(set) var c2sPort: Int = 0
    public private(set) var directTLSPort: Int = 0
    /// Prosody's HTTPS port (with ``Options/fileShareSizeLimit``), else 0. Slot URLs are
    /// `https://` ``uploadDomain`` `:PORT/file_share/…`; clients connect to 127.0.0.1.
    public private(set) var httpsPort: Int = 0
    /// The component listener's port (with ``Options/components``), else 0.
    public private(set) var componentPort: Int = 0
    /// The certificate clients must trust (nil without TLS).
    public let certificate: SelfSignedCertificate?
    /// A second certificate (for `wrong.test`), trusted by `trustBundleFile` too.
    public let trustBundleFile: String?
    private var process: ChildProcess?
    private let configFile: String

    /// Missing commands the server needs (`prosody`, `prosodyctl`, `openssl`) for `release`.
    public static func missingPrerequisites(_ release: ProsodyRelease = .testDefault) -> [String] {
        release.missingPrerequisites
    }

    /// Creates the directory, certificates and configuration and starts Prosody with
    /// these accounts (`(localpart, password)`).
    /// ``start(_:accounts:)`` on a thread of its own: making certificates, registering
    /// accounts and waiting for the ports take seconds, which must not hold one of the few
    /// threads async tests share (two on a 2-core machine: two starts at once stall every
    /// other test).
    public static func started(_ options: Options = Options(), accounts: [(String, String)] = []) async throws -> ProsodyServer {
        try await Subprocess.offThread { try ProsodyServer.start(options, accounts: accounts) }
    }

    public static func start(_ options: Options = Options(), accounts: [(String, String)] = []) throws -> ProsodyServer {
        let missing = self.missingPrerequisites(options.release)
        guard missing.isEmpty else {
            throw Subprocess.Failure(
                command: "prosody", status: 127,
                output: "missing \(missing.joined(separator: ", ")); install with: apt-get install prosody openssl"
            )
        }
        let server = try ProsodyServer(options: options)
        for (user, password) in accounts {
            try server.register(user, password: password)
        }
        try server.launch(pickPorts: true)
        return server
    }

    private init(options: Options) throws {
        self.options = options
        var template = Array("/tmp/xmpp-bridge-prosody-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else {
            throw Subprocess.Failure(command: "mkdtemp", status: errno, output: String(cString: strerror(errno)))
        }
        self.directory = String(cString: path)
        self.configFile = "\(self.directory)/prosody.cfg.lua"
        try FileManager.default.createDirectory(atPath: "\(self.directory)/data", withIntermediateDirectories: true)
        if options.tls {
            let certs = "\(self.directory)/certs"
            // With an upload service the one certificate also names its domain, which is the
            // host of the slot URLs (Prosody serves HTTPS with the same certificate).
            let own = try SelfSignedCertificate.make(
                name: options.domain, in: certs,
                subjectAltName: options.fileShareSizeLimit == nil
                    ? nil : "DNS:\(options.domain),DNS:upload.\(options.domain)" + (options.fileShareHTTPHost.map { ",DNS:\($0)" } ?? "")
            )
            let wrong = try SelfSignedCertificate.make(name: "wrong.test", in: certs)
            let bundle = "\(certs)/trust-both.pem"
            let both = try String(contentsOfFile: own.certificateFile, encoding: .utf8)
                + String(contentsOfFile: wrong.certificateFile, encoding: .utf8)
            try both.write(toFile: bundle, atomically: true, encoding: .utf8)
            // Prosody picks certificates from this folder by name (and prefers them for
            // SNI), so it holds only the pair to present.
            let presented = options.certificateName == "wrong.test" ? wrong : own
            let active = "\(certs)/active"
            try FileManager.default.createDirectory(atPath: active, withIntermediateDirectories: true)
            for file in [presented.certificateFile, presented.privateKeyFile] {
                try FileManager.default.copyItem(atPath: file, toPath: "\(active)/\((file as NSString).lastPathComponent)")
            }
            self.certificate = own
            self.trustBundleFile = bundle
        } else {
            self.certificate = nil
            self.trustBundleFile = nil
        }
        try self.writeConfig()
    }

    deinit {
        self.process?.terminate(timeout: 1)
    }

    /// Creates an account with `prosodyctl` (works while running or stopped).
    public func register(_ user: String, password: String) throws {
        try Subprocess.run(self.options.release.prosodyctl, ["--config", self.configFile, "register", user, self.options.domain, password])
    }

    /// Creates many accounts, each with `password`: the first with `prosodyctl`, the rest
    /// as copies of its stored credentials (SCRAM's salted keys do not depend on the user
    /// name), so hundreds take a moment instead of a Lua start each.
    public func register(_ users: [String], password: String) throws {
        guard let first = users.first else { return }
        try self.register(first, password: password)
        let folder = "\(self.directory)/data/\(Self.storageName(self.options.domain))/accounts"
        let stored = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(Self.storageName(first)).dat"))
        for user in users.dropFirst() {
            try stored.write(to: URL(fileURLWithPath: "\(folder)/\(Self.storageName(user)).dat"))
        }
    }

    /// How Prosody's file storage names a host or user: lower-cased, every character but
    /// letters and digits as `%xx`.
    package static func storageName(_ text: String) -> String {
        text.lowercased().unicodeScalars.map { scalar in
            scalar.properties.isAlphabetic && scalar.isASCII || ("0"..."9").contains(scalar) ? String(scalar) : String(format: "%%%02x", scalar.value)
        }.joined()
    }

    /// Runs an admin console command (`prosodyctl shell`, needs ``Options/adminShell``), e.g.
    /// `["c2s", "close", "user@example.test"]`; returns its output.
    @discardableResult
    public func shell(_ arguments: [String]) throws -> String {
        try Subprocess.run(self.options.release.prosodyctl, ["--config", self.configFile, "shell"] + arguments)
    }

    /// Whether Prosody's log so far contains `text`.
    public func logContains(_ text: String) -> Bool {
        self.logCount(text) > 0
    }

    /// How many times the server's log has `text` so far.
    public func logCount(_ text: String) -> Int {
        ((try? String(contentsOfFile: "\(self.directory)/prosody.log", encoding: .utf8)) ?? "").components(separatedBy: text).count - 1
    }

    /// Changes an account's password (`prosodyctl passwd` reads it twice from stdin).
    public func setPassword(_ user: String, password: String) throws {
        try Subprocess.run(self.options.release.prosodyctl, ["--config", self.configFile, "passwd", "\(user)@\(self.options.domain)"], input: "\(password)\n\(password)\n")
    }

    /// Stops Prosody (SIGTERM, then SIGKILL after 5 s) and waits for it to exit.
    public func stop() {
        self.process?.terminate()
        self.process = nil
    }

    /// Kills Prosody at once (SIGKILL), as a crash would.
    public func kill() {
        guard let process = self.process else { return }
        Glibc.kill(process.pid, SIGKILL)
        process.terminate(timeout: 5)
        self.process = nil
    }

    /// Freezes Prosody (SIGSTOP): connections stay open but nothing is answered, as with a
    /// hung server or a silently dropped link. ``resume()`` thaws it.
    public func pause() {
        guard let process = self.process else { return }
        Glibc.kill(process.pid, SIGSTOP)
    }

    /// Thaws a paused Prosody (SIGCONT).
    public func resume() {
        guard let process = self.process else { return }
        Glibc.kill(process.pid, SIGCONT)
    }

    /// The server's process id, while it runs.
    public var pid: Int32? { self.process?.pid }

    /// Starts Prosody again on the same ports with the same data.
    public func restart() throws {
        self.stop()
        try self.launch(pickPorts: false)
    }

    /// Stops Prosody and deletes its directory (kept, and its path printed, when
    /// `XMPP_BRIDGE_TEST_KEEP_DIRECTORIES` is set: to read a failed run's logs and archive).
    public func shutdown() {
        self.stop()
        if ProcessInfo.processInfo.environment["XMPP_BRIDGE_TEST_KEEP_DIRECTORIES"] != nil {
            print("[kept] \(self.directory)")
            return
        }
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// The server's log so far (for failure messages).
    public func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: "\(self.directory)/prosody.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    // MARK: -

    private func launch(pickPorts: Bool) throws {
        try ServerLaunch.retrying(
            server: "prosody", pickPorts: pickPorts,
            choosePorts: {
                let ports = try Self.freeLoopbackPorts(count: 4)
                self.c2sPort = ports[0]
                self.directTLSPort = self.options.tls ? ports[1] : 0
                self.httpsPort = self.options.tls && self.options.fileShareSizeLimit != nil ? ports[2] : 0
                self.componentPort = self.options.components.isEmpty ? 0 : ports[3]
                try self.writeConfig()
            },
            start: { try self.launchOnce() }, stop: { self.stop() }
        )
    }

    private func launchOnce() throws {
        let logFile = "\(self.directory)/prosody.log"
        let offset = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
        let process = try ChildProcess(
            executable: self.options.release.prosody,
            arguments: ["-F", "--config", self.configFile],
            logFile: "\(self.directory)/prosody.stdout"
        )
        self.process = process

        // Ready when every listener accepts a TCP connection (log lines depend on the log level).
        let ports = [self.c2sPort, self.directTLSPort, self.httpsPort, self.componentPort].filter { $0 != 0 }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else {
                throw Subprocess.Failure(command: "prosody", status: 1, output: "exited during start-up\n" + self.logTail())
            }
            let log = (try? Data(contentsOf: URL(fileURLWithPath: logFile))).map { String(decoding: $0.dropFirst(offset), as: UTF8.self) } ?? ""
            if log.contains("Failed to open server port") {
                throw Subprocess.Failure(command: "prosody", status: 1, output: "port taken")
            }
            if ports.allSatisfy(Self.acceptsConnections) {
                return
            }
            usleep(20_000)
        }
        throw Subprocess.Failure(command: "prosody", status: 1, output: "not ready after 20 s\n" + self.logTail())
    }

    private func writeConfig() throws {
        var modules = ["disco", "roster", "saslauth", "ping", "time", "carbons", "blocklist", "smacks", "offline", "vcard", "pep"]
        if self.options.serverInfo { modules += ["version", "uptime"] }
        if self.options.tls { modules.append("tls") }
        if self.options.registration { modules.append("register") }
        if self.options.archive { modules.append("mam") }
        if self.options.adminShell { modules.append("admin_shell") }
        if self.options.sasl2 { modules += ["sasl2", "sasl2_bind2", "sasl2_sm", "sasl2_fast", "sasl_ssdp"] }
        var config = """
            -- Generated by xmpp-bridge's test harness. Nothing from /etc/prosody is used.
            run_as_root = true
            pidfile = "\(self.directory)/prosody.pid"
            data_path = "\(self.directory)/data"
            certificates = "\(self.directory)/certs/active"
            plugin_paths = { }
            log = { { levels = { min = "\(self.options.logLevel)" }, to = "file", filename = "\(self.directory)/prosody.log" } }
            interfaces = { "127.0.0.1" }
            local_interfaces = { "127.0.0.1" }
            c2s_ports = { \(self.c2sPort == 0 ? "" : String(self.c2sPort)) }
            c2s_direct_tls_ports = { \(self.directTLSPort == 0 ? "" : String(self.directTLSPort)) }
            s2s_ports = { }
            component_ports = { \(self.componentPort == 0 ? "" : String(self.componentPort)) }
            component_interfaces = { "127.0.0.1" }
            http_ports = { }
            http_interfaces = { "127.0.0.1" }
            https_ports = { \(self.httpsPort == 0 ? "" : String(self.httpsPort)) }
            https_interfaces = { "127.0.0.1" }
            modules_disabled = { "s2s"; "s2s_auth_certs"; }
            modules_enabled = { \(modules.map { "\"\($0)\";" }.joined(separator: " ")) }
            authentication = "internal_hashed"
            password_hash = "\(self.options.passwordHash)"
            storage = "internal"

            """
        if let certificate = self.certificate {
            let presented = self.options.certificateName == "wrong.test" ? "wrong.test" : certificate.name
            config += """
                c2s_require_encryption = true
                allow_unencrypted_plain_auth = false
                ssl = { certificate = "\(self.directory)/certs/active/\(presented).crt"; key = "\(self.directory)/certs/active/\(presented).key"; }

                """
        } else {
            config += "c2s_require_encryption = false\nallow_unencrypted_plain_auth = true\n"
        }
        if self.options.registration { config += "allow_registration = true\nmin_seconds_between_registrations = 0\n" }
        if self.options.archive { config += "archive_expires_after = \"never\"\ndefault_archive_policy = true\n" }
        if let limit = self.options.stanzaSizeLimit { config += "c2s_stanza_size_limit = \(limit)\n" }
        if let seconds = self.options.hibernationSeconds { config += "smacks_hibernation_time = \(seconds)\n" }
        config += "\nVirtualHost \"\(self.options.domain)\"\n"
        if self.options.rooms {
            // Options after a Component line belong to it. muc_log_all_rooms: every room is
            // archived and owners cannot turn it off.
            config += """

                Component "\(self.mucDomain)" "muc"
                modules_enabled = { "muc_mam"; }
                restrict_room_creation = false
                muc_room_locking = false
                muc_room_default_public = true
                muc_room_default_persistent = true
                muc_room_default_history_length = 20
                muc_log_by_default = true
                muc_log_all_rooms = true
                muc_log_expires_after = "never"

                """
        }
        if let limit = self.options.fileShareSizeLimit, self.options.tls {
            // XEP-0363 with mod_http_file_share: slot URLs use the component's name and the
            // HTTPS port (http_host defaults to the component's domain).
            config += """

                Component "\(self.uploadDomain)" "http_file_share"
                http_file_share_size_limit = \(limit)
                http_file_share_daily_quota = \(limit * 100)
                \(self.options.fileShareHTTPHost.map { "http_host = \"\($0)\"" } ?? "")

                """
        }
        for (domain, secret) in self.options.components.sorted(by: { $0.key < $1.key }) {
            config += "\nComponent \"\(domain)\"\ncomponent_secret = \"\(secret)\"\n"
        }
        try config.write(toFile: self.configFile, atomically: true, encoding: .utf8)
    }

    /// Whether Prosody has `mod_NAME` among its modules (Debian's path), e.g. `http_file_share`.
    public static func hasModule(_ name: String, release: ProsodyRelease = .testDefault) -> Bool {
        FileManager.default.fileExists(atPath: "\(release.modules)/mod_\(name).lua")
    }

    /// Whether something listens on 127.0.0.1:`port`.
    package static func acceptsConnections(_ port: Int) -> Bool {
        LoopbackPorts.withLoopbackSocket(port) { fd, address, length in connect(fd, address, length) == 0 }
    }

    /// Free ports on 127.0.0.1, distinct, outside the kernel's ephemeral range (``LoopbackPorts``).
    public static func freeLoopbackPorts(count: Int) throws -> [Int] {
        try LoopbackPorts.pick(count: count)
    }
}
