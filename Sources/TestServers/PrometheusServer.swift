import Foundation
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway Prometheus (Debian's `prometheus`, 2.42) for tests: its own folder and
/// storage, a loopback port, one scrape job `xmpp-bridge` on the given targets every
/// second, and the given rule files evaluated every second. Ask its HTTP API
/// (`/api/v1/query`, `/api/v1/rules`) once it has scraped.
public final class PrometheusServer: @unchecked Sendable {
    public let directory: String
    public let port: Int
    private var process: ChildProcess?

    /// Missing commands (`prometheus`).
    public static func missingPrerequisites() -> [String] {
        Subprocess.which("prometheus") == nil ? ["prometheus"] : []
    }

    /// Starts it scraping `targets` (host:port) and evaluating `ruleFiles` (absolute paths).
    public static func start(targets: [String], ruleFiles: [String]) throws -> PrometheusServer {
        guard self.missingPrerequisites().isEmpty else {
            throw Subprocess.Failure(command: "prometheus", status: 127, output: "missing; install with: apt-get install prometheus")
        }
        return try PrometheusServer(targets: targets, ruleFiles: ruleFiles)
    }

    private init(targets: [String], ruleFiles: [String]) throws {
        self.port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
        var template = Array("/tmp/xmpp-bridge-prometheus-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else {
            let error = errno
            throw Subprocess.Failure(command: "mkdtemp", status: error, output: String(cString: strerror(error)))
        }
        self.directory = String(cString: path)
        let quoted = { (items: [String]) in items.map { "'\($0)'" }.joined(separator: ", ") }
        let configuration = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files: [\(quoted(ruleFiles))]
            scrape_configs:
              - job_name: xmpp-bridge
                static_configs:
                  - targets: [\(quoted(targets))]
            """
        do {
            try configuration.write(toFile: "\(self.directory)/prometheus.yml", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: "\(self.directory)/data", withIntermediateDirectories: true)
            self.process = try Self.launch(in: self.directory, port: self.port)
        } catch {
            try? FileManager.default.removeItem(atPath: self.directory)
            throw error
        }
    }

    private static func launch(in directory: String, port: Int) throws -> ChildProcess {
        try ChildProcess(
            executable: Subprocess.which("prometheus") ?? "/usr/bin/prometheus",
            arguments: [
                "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=info",
            ],
            logFile: "\(directory)/prometheus.log"
        )
    }

    deinit {
        self.process?.terminate(timeout: 1)
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(self.port)" }

    /// What it logged so far.
    public var log: String {
        (try? String(contentsOfFile: "\(self.directory)/prometheus.log", encoding: .utf8)) ?? ""
    }

    /// Stops the process it started (by pid) and removes its folder.
    public func shutdown() {
        self.process?.terminate(timeout: 5)
        self.process = nil
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}
