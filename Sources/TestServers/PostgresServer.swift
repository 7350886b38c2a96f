import Foundation
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL (Debian's `postgresql`, the newest installed) for tests (issue 26): `initdb` in a
/// folder of its own, SCRAM-SHA-256 for every connection (`--auth=scram-sha-256`, with a
/// password file), a loopback port and a Unix socket in that folder, nothing else. The
/// server refuses to run as root: as root the folder is given to the `postgres` user and
/// the server started through `setpriv`, which execs it, so the pid kept is the
/// postmaster's own and kill -9, SIGSTOP and a restart reach exactly the process started.
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    /// Its loopback port: chosen again only if taken at the first start, kept afterwards.
    public private(set) var port: Int
    /// The role and database the tests use (the role owns the cluster).
    public let user = "bridge"
    public let database = "bridge"
    public let password: String
    private let binaries: String
    private let readOnly: Bool
    private var process: ChildProcess?

    /// The newest installed server's programs (`/usr/lib/postgresql/N/bin`).
    static func installedBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    /// Missing commands (`initdb` and `postgres` of the `postgresql` package; `setpriv` as root).
    public static func missingPrerequisites() -> [String] {
        var missing: [String] = []
        if self.installedBinaries() == nil { missing.append("postgresql") }
        if getuid() == 0, Subprocess.which("setpriv") == nil { missing.append("setpriv (util-linux)") }
        return missing
    }

    /// Initialises a cluster and starts it; returns once it accepts connections. `readOnly`:
    /// every transaction is read-only by default (`default_transaction_read_only`), as a
    /// standby looks to a client asking for `target_session_attrs=read-write`.
    public static func start(password: String = "pw-\(UInt64.random(in: 1...UInt64.max))", readOnly: Bool = false) throws -> PostgresServer {
        guard let binaries = self.installedBinaries(), self.missingPrerequisites().isEmpty else {
            throw Subprocess.Failure(command: "postgres", status: 127, output: "missing: \(self.missingPrerequisites().joined(separator: ", ")); install with: apt-get install postgresql")
        }
        let server = try PostgresServer(binaries: binaries, password: password, readOnly: readOnly)
        do {
            try server.launchOnFreePort()
            try Subprocess.run(
                "\(binaries)/createdb", ["-h", "127.0.0.1", "-p", String(server.port), "-U", server.user, server.database],
                environment: ["PGPASSWORD": password]
            )
            if readOnly { try server.restart() }
        } catch {
            server.shutdown()
            throw error
        }
        return server
    }

    private init(binaries: String, password: String, readOnly: Bool) throws {
        let port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
        var template = Array("/tmp/xmpp-bridge-postgres-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else {
            throw Subprocess.Failure(command: "mkdtemp", status: errno, output: String(cString: strerror(errno)))
        }
        self.directory = String(cString: path)
        self.port = port
        self.binaries = binaries
        self.password = password
        self.readOnly = readOnly
        do {
            try self.initialise()
        } catch {
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
    }

    /// The cluster: its password file, then `initdb`.
    private func initialise() throws {
        let binaries = self.binaries
        let password = self.password
        try "\(password)\n".write(toFile: "\(self.directory)/password", atomically: true, encoding: .utf8)
        if getuid() == 0 {
            try Subprocess.run("chown", ["-R", "postgres:postgres", self.directory])
        }
        let initdb = self.asServerUser("\(binaries)/initdb")
        try Subprocess.run(
            initdb[0],
            Array(initdb.dropFirst()) + [
                "-D", "\(self.directory)/data", "-U", self.user, "--auth=scram-sha-256", "--pwfile=\(self.directory)/password", "-E", "UTF8",
                "--locale=C", "--no-sync",
            ]
        )
    }

    deinit {
        self.shutdown()
    }

    /// `postgresql://bridge@127.0.0.1:PORT/bridge` (the password apart).
    public var url: String { self.url(database: self.database) }

    /// The URL of another database of this server (see ``createDatabase(_:)``).
    public func url(database: String) -> String { "postgresql://\(self.user)@127.0.0.1:\(self.port)/\(database)" }

    /// Creates an empty database `name` (`createdb`), for a test of its own on a shared server.
    public func createDatabase(_ name: String) throws {
        try Subprocess.run(
            "\(self.binaries)/createdb", ["-h", "127.0.0.1", "-p", String(self.port), "-U", self.user, name],
            environment: ["PGPASSWORD": self.password]
        )
    }

    /// ``start(password:readOnly:)`` on a thread of its own: `initdb` and the wait for the
    /// server take seconds, which must not hold one of the few threads async tests share.
    public static func started(password: String = "pw-\(UInt64.random(in: 1...UInt64.max))", readOnly: Bool = false) async throws -> PostgresServer {
        try await Subprocess.offThread { try PostgresServer.start(password: password, readOnly: readOnly) }
    }

    /// The postmaster's pid while it runs.
    public var pid: pid_t? { self.process.flatMap { $0.isRunning ? $0.pid : nil } }

    /// What it logged so far.
    public var log: String {
        (try? String(contentsOfFile: "\(self.directory)/postgres.log", encoding: .utf8)) ?? ""
    }

    /// The first start: a port taken meanwhile by another listener (the port was only
    /// tested free before `initdb`) is replaced by a new one, up to five times.
    private func launchOnFreePort() throws {
        var attempt = 1
        while true {
            do {
                return try self.launch(readOnly: false)
            } catch let failure as Subprocess.Failure where failure.output.hasPrefix("port \(self.port) taken") && attempt < 5 {
                attempt += 1
                self.port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
            }
        }
    }

    /// `command` run as the server's user: as itself, or through `setpriv` as root (which
    /// execs it: no process in between).
    private func asServerUser(_ command: String) -> [String] {
        guard getuid() == 0 else { return [command] }
        return [Subprocess.which("setpriv") ?? "/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", command]
    }

    /// Starts the postmaster on the existing cluster (`readOnly` nil: as the server was
    /// made) and waits until it logs that it is ready (after a kill -9 it first recovers,
    /// refusing connections meanwhile). The old server's children may still hold its
    /// shared memory for a moment: a start refused for that is tried again, for up to 20 s.
    private func launch(readOnly: Bool? = nil) throws {
        let deadline = Date().addingTimeInterval(20)
        let logFile = "\(self.directory)/postgres.log"
        while true {
            let offset = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
            // What this start logged so far.
            func logged() -> String {
                (try? Data(contentsOf: URL(fileURLWithPath: logFile))).map { String(decoding: $0.dropFirst(offset), as: UTF8.self) } ?? ""
            }
            func ready() -> Bool { logged().contains("database system is ready to accept connections") }
            let command = self.asServerUser("\(self.binaries)/postgres")
            let process = try ChildProcess(
                executable: command[0],
                arguments: Array(command.dropFirst()) + [
                    "-D", "\(self.directory)/data", "-p", String(self.port), "-h", "127.0.0.1", "-k", self.directory, "-c", "fsync=on",
                    "-c", "default_transaction_read_only=\((readOnly ?? self.readOnly) ? "on" : "off")",
                ],
                logFile: logFile
            )
            self.process = process
            while Date() < deadline, process.isRunning, !ready() { usleep(20_000) }
            if process.isRunning, ready() { return }
            let log = logged()
            if log.contains("could not bind") {
                process.terminate(timeout: 1)
                throw Subprocess.Failure(command: "postgres", status: 1, output: "port \(self.port) taken\n" + log.suffix(2000))
            }
            guard Date() < deadline else {
                process.terminate(timeout: 1)
                throw Subprocess.Failure(command: "postgres", status: 1, output: "not ready after 20 s\n" + self.log.suffix(2000))
            }
            usleep(100_000)  // exited during start-up (the old one's memory still held): again
        }
    }

    /// kill -9 the postmaster.
    public func kill() {
        self.process?.signal(SIGKILL)
        _ = self.process?.wait(timeout: 10)
    }

    /// SIGSTOP or SIGCONT the postmaster.
    public func pause(_ paused: Bool) {
        self.process?.signal(paused ? SIGSTOP : SIGCONT)
    }

    /// Starts it again on the same cluster and port (after ``kill()`` or ``stop()``).
    public func restart() throws {
        if self.pid != nil { self.stop() }
        try self.launch()
    }

    /// A fast shutdown (SIGINT: sessions are closed, the cluster is consistent); a paused
    /// server is let go on first.
    public func stop() {
        guard let process = self.process, process.isRunning else { return }
        process.signal(SIGCONT)
        process.signal(SIGINT)
        if !process.wait(timeout: 10) { process.terminate(timeout: 1) }
    }

    /// Stops the process it started (by pid) and removes its folder.
    public func shutdown() {
        self.stop()
        self.process = nil
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}
