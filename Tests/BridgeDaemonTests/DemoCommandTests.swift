import Foundation
import IntegrationSupport
import TestServers
import Testing

/// `xmpp-bridge demo` with piped standard input (issue 13, defect 13): each line is
/// narrated in turn, arriving at bob and alice, and bob's reply reaches alice.
@Suite("demo with piped input", .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(2)))
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
    }
}
