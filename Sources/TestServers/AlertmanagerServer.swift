import Foundation
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway Alertmanager (Debian's `prometheus-alertmanager`, 0.25) for tests: its own
/// folder, a loopback port, gossip off (`--cluster.listen-address=`, so two instances both
/// notify, as an HA pair does when gossip fails), one route to a webhook receiver that
/// groups by `alertname`, waits 0 s and re-checks groups every second.
public final class AlertmanagerServer: @unchecked Sendable {
    public let directory: String
    public let port: Int
    private var process: ChildProcess?

    /// Missing commands (`prometheus-alertmanager`).
    public static func missingPrerequisites() -> [String] {
        Subprocess.which("prometheus-alertmanager") == nil ? ["prometheus-alertmanager"] : []
    }

    /// Starts it, notifying `webhookURL` with `Authorization: Bearer token`. Wait for
    /// `GET /-/ready` before posting alerts.
    public static func start(webhookURL: String, token: String) throws -> AlertmanagerServer {
        guard self.missingPrerequisites().isEmpty else {
            throw Subprocess.Failure(command: "prometheus-alertmanager", status: 127, output: "missing; install with: apt-get install prometheus-alertmanager")
        }
        return try AlertmanagerServer(webhookURL: webhookURL, token: token)
    }

    private init(webhookURL: String, token: String) throws {
        var template = Array("/tmp/xmpp-bridge-alertmanager-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else {
            throw Subprocess.Failure(command: "mkdtemp", status: errno, output: String(cString: strerror(errno)))
        }
        self.directory = String(cString: path)
        self.port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
        try "\(token)\n".write(toFile: "\(self.directory)/token", atomically: true, encoding: .utf8)
        let configuration = """
            route:
              receiver: bridge
              group_by: ['alertname']
              group_wait: 0s
              group_interval: 1s
              repeat_interval: 1h
            receivers:
              - name: bridge
                webhook_configs:
                  - url: '\(webhookURL)'
                    send_resolved: true
                    http_config:
                      authorization:
                        credentials_file: '\(self.directory)/token'
            """
        try configuration.write(toFile: "\(self.directory)/alertmanager.yml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(self.directory)/data", withIntermediateDirectories: true)
        self.process = try ChildProcess(
            executable: Subprocess.which("prometheus-alertmanager") ?? "/usr/bin/prometheus-alertmanager",
            arguments: [
                "--config.file=\(self.directory)/alertmanager.yml", "--storage.path=\(self.directory)/data",
                "--web.listen-address=127.0.0.1:\(self.port)", "--cluster.listen-address=", "--log.level=debug",
            ],
            logFile: "\(self.directory)/alertmanager.log"
        )
    }

    deinit {
        self.process?.terminate(timeout: 1)
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(self.port)" }

    /// What it logged so far.
    public var log: String {
        (try? String(contentsOfFile: "\(self.directory)/alertmanager.log", encoding: .utf8)) ?? ""
    }

    /// Stops the process it started (by pid) and removes its folder.
    public func shutdown() {
        self.process?.terminate(timeout: 5)
        self.process = nil
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}
