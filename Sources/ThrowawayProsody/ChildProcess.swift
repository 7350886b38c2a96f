import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A long-running child started with `posix_spawn`, with an empty signal mask and
/// default signal dispositions (Foundation's `Process` passes on the spawning thread's
/// mask, in which SIGTERM is blocked, so a server would ignore a polite stop), stdin
/// from /dev/null, stdout and stderr appended to a log file, and no other inherited
/// descriptors. It stays in our process group, so an interrupted run takes it along.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private var exitStatus: Int32?

    /// Output to `logFile` (stdout and stderr), stdin from /dev/null.
    package convenience init(executable: String, arguments: [String], logFile: String) throws {
        try self.init(executable: executable, arguments: arguments, stdin: "/dev/null", stdout: logFile, stderr: logFile)
    }

    /// Standard input read from the file `stdin`, output appended to `stdout` and `stderr`;
    /// `environment` adds to (or replaces) variables of this process's environment.
    public init(executable: String, arguments: [String], stdin: String, stdout: String, stderr: String, environment: [String: String] = [:]) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
        // Close inherited descriptors (a test runner's pipes, sockets); glibc ignores
        // ones that closed in the meantime.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw Subprocess.Failure(command: executable, status: status, output: String(cString: strerror(status)))
        }
        self.pid = pid
    }

    deinit {
        if self.isRunning {
            kill(self.pid, SIGKILL)
            _ = self.waitForExit(timeout: 1)
        }
    }

    /// The exit status once the child has exited normally (nil while running or if killed).
    public var exitCode: Int32? {
        guard !self.isRunning, let status = self.exitStatus else { return nil }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }

    /// Sends a signal.
    public func signal(_ number: Int32) {
        kill(self.pid, number)
    }

    /// Waits up to `timeout` seconds for the child to exit; true if it did.
    public func wait(timeout: TimeInterval) -> Bool {
        self.waitForExit(timeout: timeout)
    }

    /// Whether the child has not exited yet (reaps it if it has).
    public var isRunning: Bool {
        guard self.exitStatus == nil else { return false }
        var status: Int32 = 0
        let result = waitpid(self.pid, &status, WNOHANG)
        if result == self.pid || result < 0 {
            self.exitStatus = status
            return false
        }
        return true
    }

    /// SIGTERM, up to `timeout` seconds to exit, then SIGKILL.
    public func terminate(timeout: TimeInterval = 5) {
        guard self.isRunning else { return }
        kill(self.pid, SIGTERM)
        if !self.waitForExit(timeout: timeout) {
            kill(self.pid, SIGKILL)
            _ = self.waitForExit(timeout: 5)
        }
    }

    private func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while self.isRunning {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
