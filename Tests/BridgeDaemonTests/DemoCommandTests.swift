import Foundation
import IntegrationSupport
import TestServers
import Testing

/// `xmpp-bridge demo` with piped standard input (issue 13, defect 13): each line is
/// narrated in turn, arriving at bob and alice, and bob's reply reaches alice.
@Suite("demo with piped input", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(2)))
struct DemoCommandTests {
    @Test("echo lines | xmpp-bridge demo: every line narrated once, in order, bob's reply reaches alice, exit 0")
    func pipedInput() throws {
        let directory = NSTemporaryDirectory() + "demo-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = try CommandLineTests.write("piped one\npiped <&> two 😀\n", in: directory, name: "stdin")
        let run = try CommandLineTests.start(["demo"], stdin: input, in: directory)
        #expect(run.finish(timeout: 90) == 0, "stderr: \(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        var expected: [String] = []
        for line in ["Hello from xmpp-bridge <&> 😀 中文", "piped one", "piped <&> two 😀"] {
            expected += [
                "you (stdin) → \(line)", "bob's client received: [demo] you: \(line)", "alice's client received: [demo] you: \(line)",
            ]
        }
        expected += ["alice's client received: [demo] bob: Got it, thanks! 👍"]
        let narration = lines.filter { $0.hasPrefix("you (stdin)") || $0.contains("client received") }
        #expect(narration == expected, "stdout:\n\(run.output)")
        // Bob's reply also comes out of the stdio transport, once.
        #expect(lines.filter { $0 == "bob: Got it, thanks! 👍" }.count == 1, "stdout:\n\(run.output)")
        try Self.leftNothingBehind(run.output)
    }

    /// Issue 42: the demo leaves nothing behind. Its Prosody (the pid and folder it printed)
    /// is gone once it ended; and on CI, a machine the prerequisites were installed on by
    /// `scripts/install-prerequisites.sh`, no service the demo's packages bring (Prosody's) is
    /// enabled to start at boot. (Elsewhere an administrator may have enabled their own.)
    static func leftNothingBehind(_ output: String) throws {
        let started = try #require(output.firstMatch(of: /Prosody started \(pid (\d+)\) on \S+ \(STARTTLS\) in (\S+);/), "stdout:\n\(output)")
        let pid = try #require(Int32(started.1))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the demo's Prosody (pid \(pid)) still runs")
        #expect(!FileManager.default.fileExists(atPath: String(started.2)), "the demo's Prosody folder \(started.2) is still there")
        guard IntegrationEnvironment.isCI else { return }
        let files = try Subprocess.run("dpkg", ["-L", "prosody"]).split(separator: "\n")
        let units = files.filter { $0.contains("/systemd/system/") && ($0.hasSuffix(".service") || $0.hasSuffix(".socket") || $0.hasSuffix(".timer")) }
        #expect(!units.isEmpty, "prosody ships no systemd unit? \(files)")
        for unit in units {
            let name = String(unit.split(separator: "/").last ?? unit)
            // `is-enabled` answers on standard output, exiting 0 only for the enabled states.
            let state: String
            do {
                state = try Subprocess.run("systemctl", ["is-enabled", name])
            } catch let failure as Subprocess.Failure where failure.status == 1 {
                state = failure.output
            }
            let word = state.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(["disabled", "masked", "static", "indirect"].contains(word), "\(name) is \(word) after the prerequisites' installation")
        }
        // And the system's own Prosody is not running (it runs as the user prosody).
        let prosodyUID = try Subprocess.run("id", ["-u", "prosody"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let running = try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { entry in
            guard entry.allSatisfy(\.isNumber), let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { return false }
            return status.split(separator: "\n").contains { $0.hasPrefix("Uid:") && $0.split(separator: "\t").dropFirst().first == Substring(prosodyUID) }
        }
        #expect(running.isEmpty, "processes of the user prosody run: pids \(running)")
    }
}
