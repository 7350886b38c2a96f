import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `Type=notify` (sd_notify(3)) with the real daemon: the test plays systemd, a datagram
/// socket at `$NOTIFY_SOCKET`, and reads what the bridge says: READY=1, WATCHDOG=1 at
/// half `WATCHDOG_USEC`, STOPPING=1 on SIGTERM. No XMPP server needed.
@Suite("systemd notifications", .onTestBodyThreads, .serialized, .timeLimit(.minutes(2)))
struct SystemdNotifyTests {
    @Test("READY=1 once running, WATCHDOG=1 while running, STOPPING=1 on SIGTERM; state and socket go to STATE_DIRECTORY and RUNTIME_DIRECTORY")
    func notifications() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: "\(directory)/state", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(directory)/run", withIntermediateDirectories: true)
        let config = "\(directory)/bridge.toml"
        try """
            [local.ops]
            kind = "socket"
            path = "ops.sock"

            [channels.ops]
            members = [ { local = "ops" } ]
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let socket = try DatagramListener(path: "\(directory)/notify")
        let bridge = try BridgeDaemon.start(
            config: config, in: directory,
            environment: [
                "NOTIFY_SOCKET": "\(directory)/notify", "WATCHDOG_USEC": "200000", "STATE_DIRECTORY": "\(directory)/state",
                "RUNTIME_DIRECTORY": "\(directory)/run",
            ]
        )
        defer { bridge.terminate() }
        let ready = await socket.next(timeout: .seconds(20))
        #expect(ready?.hasPrefix("READY=1") == true, "got \(ready ?? "nothing"); stderr: \(bridge.run.errors)")
        // Pings at half the interval: two in a row show the loop runs.
        #expect(await socket.next(timeout: .seconds(5)) == "WATCHDOG=1")
        #expect(await socket.next(timeout: .seconds(5)) == "WATCHDOG=1")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/state/bridge.sqlite"))
        try await bridge.waitForSocket("\(directory)/run/bridge.control")
        bridge.run.process.signal(SIGTERM)
        var stopping = false
        while let message = await socket.next(timeout: .seconds(10)) {
            if message.hasPrefix("STOPPING=1") {
                stopping = true
                break
            }
            #expect(message == "WATCHDOG=1")
        }
        #expect(stopping, "no STOPPING=1; stderr: \(bridge.run.errors)")
        #expect(bridge.run.finish(timeout: 15) == 0, "stderr: \(bridge.run.errors)")
    }

    @Test("contrib/systemd/xmpp-bridge.service passes systemd-analyze verify (with ExecStart pointing at this build)")
    func unitVerifies() throws {
        guard Subprocess.which("systemd-analyze") != nil else {
            if IntegrationEnvironment.isCI { throw TestFailure("systemd-analyze is missing (apt-get install systemd)") }
            print("systemd-analyze not installed: unit not verified")
            return
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let unit = try String(contentsOfFile: "\(repository)/contrib/systemd/xmpp-bridge.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/xmpp-bridge run"))
        for line in ["Type=notify", "WatchdogSec=", "ExecReload=/bin/kill -HUP $MAINPID", "StateDirectory=xmpp-bridge", "RuntimeDirectory=xmpp-bridge", "RuntimeDirectoryPreserve=yes", "ProtectSystem=strict", "NoNewPrivileges=yes"] {
            #expect(unit.contains(line), "missing \(line)")
        }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = "\(directory)/xmpp-bridge.service"
        try unit.replacingOccurrences(of: "/usr/bin/xmpp-bridge", with: CommandLineTests.binary).write(toFile: file, atomically: true, encoding: .utf8)
        // The pages of Documentation= exist once the package is installed: scripts/test-package.sh
        // verifies the installed unit with them.
        let output = try Subprocess.run("systemd-analyze", ["verify", "--man=no", file])
        #expect(!output.contains("xmpp-bridge.service:"), "systemd-analyze verify: \(output)")
    }

    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/xb-notify-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw TestFailure("mkdtemp failed") }
        return String(cString: made)
    }
}

/// A bound Unix datagram socket, read without blocking a thread.
final class DatagramListener {
    private let descriptor: Int32

    init(path: String) throws {
        self.descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
        _ = fcntl(self.descriptor, F_SETFL, fcntl(self.descriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(self.descriptor)
    }

    /// The next datagram as text, or nil after `timeout`.
    func next(timeout: Duration) async -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        return await eventuallyValue(timeout: timeout, every: .milliseconds(5)) { () -> String? in
            let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }
    }
}
