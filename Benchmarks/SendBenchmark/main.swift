// `xmpp-bridge send --lines` beside `go-sendxmpp -i`: both pipe the same lines (from a
// file, so input ends right after the last line) to the same Prosody, with and without
// mod_mam. Lines are counted at the receiving account.
// Usage: swift build -c release && .build/release/send-benchmark [lines] [rounds]
import Foundation
import Logging
import ThrowawayProsody
import XMPP

let lineCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let rounds = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 3 : 3
let binaryDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
let ours = "\(binaryDirectory)/xmpp-bridge"

actor Counter {
    var bodies: [String] = []
    var lastArrival = ContinuousClock.now
    func add(_ body: String) {
        self.bodies.append(body)
        self.lastArrival = ContinuousClock.now
    }
    func count(prefix: String) -> (Int, Bool, ContinuousClock.Instant) {
        let matching = self.bodies.filter { $0.hasPrefix(prefix) }
        let expected = (0..<matching.count).map { "\(prefix)\($0 + 1)" }
        return (matching.count, matching == expected, self.lastArrival)
    }
}

struct Result {
    var tool: String
    var delivered: Int
    var inOrder: Bool
    var seconds: Double
    var exit: Int32?
    var linesPerSecond: Double { Double(self.delivered) / self.seconds }
}

func seconds(_ duration: Duration) -> Double {
    let (s, atto) = duration.components
    return Double(s) + Double(atto) / 1e18
}

func runOnce(tool: String, server: ProsodyServer, counter: Counter, run: Int) async throws -> Result {
    let prefix = "r\(run)-\(tool) line "
    let input = "\(server.directory)/input-\(run).txt"
    try (1...lineCount).map { "\(prefix)\($0)" }.joined(separator: "\n").appending("\n").write(toFile: input, atomically: true, encoding: .utf8)
    let log = "\(server.directory)/\(tool)-\(run).log"
    let arguments: [String]
    let executable: String
    switch tool {
    case "xmpp-bridge":
        executable = ours
        let password = "\(server.directory)/pw"
        try "pw\n".write(toFile: password, atomically: true, encoding: .utf8)
        arguments = [
            "send", "--lines", "--jid", "alice@example.test", "--password-file", password, "--host", "127.0.0.1",
            "--port", "\(server.c2sPort)", "--ca-file", server.certificate!.certificateFile, "bob@example.test",
        ]
    default:
        executable = Subprocess.which("go-sendxmpp") ?? "/usr/bin/go-sendxmpp"
        let rc = "\(server.directory)/empty.rc"
        _ = FileManager.default.createFile(atPath: rc, contents: nil)
        arguments = ["-f", rc, "-u", "alice@example.test", "-p", "pw", "-j", "127.0.0.1:\(server.c2sPort)", "-n", "-i", "bob@example.test"]
    }
    let start = ContinuousClock.now
    let process = try ChildProcess(executable: executable, arguments: arguments, stdin: input, stdout: log, stderr: log)
    _ = process.wait(timeout: 120)
    let exited = ContinuousClock.now
    // Wait for stragglers: until everything arrived or nothing new for 2 s.
    var (count, _, _) = await counter.count(prefix: prefix)
    var stableSince = ContinuousClock.now
    while count < lineCount, ContinuousClock.now - stableSince < .seconds(2) {
        try await Task.sleep(for: .milliseconds(20))
        let (now, _, _) = await counter.count(prefix: prefix)
        if now != count { stableSince = ContinuousClock.now }
        count = now
    }
    let (delivered, inOrder, last) = await counter.count(prefix: prefix)
    let end = delivered > 0 ? max(last, start) : exited
    return Result(tool: tool, delivered: delivered, inOrder: inOrder, seconds: seconds(end - start), exit: process.exitCode)
}

var logger = Logger(label: "send-benchmark")
logger.logLevel = .error
print("send benchmark: \(lineCount) lines, \(rounds) rounds per tool, Prosody 0.12 on 127.0.0.1")
for archive in [false, true] {
    var options = ProsodyServer.Options()
    options.archive = archive
    options.logLevel = "error"
    let server = try ProsodyServer.start(options, accounts: [("alice", "pw"), ("bob", "pw")])
    defer { server.shutdown() }
    let counter = Counter()
    let receiver = XMPPSession(
        configuration: .init(
            client: XMPPClientConfiguration(
                jid: try JID("bob@example.test/receiver"),
                tls: TLSConfiguration(additionalTrustRootsFile: server.certificate?.certificateFile),
                host: "127.0.0.1", port: server.c2sPort
            ),
            fetchRoster: false, enableCarbons: false,
            session: .init(softwareName: "send-benchmark", softwareVersion: "1.0", capabilitiesNode: "https://example.org/send-benchmark"), reconnects: false
        ),
        password: "pw", client: XMPPClient(logger: logger), clock: ContinuousClock(), ids: StanzaIDGenerator(prefix: "bench"), logger: logger
    )
    let receiving = Task {
        for await event in receiver.events {
            if case .message(let message, nil) = event, let body = message.body {
                // go-sendxmpp keeps the newline in the body.
                await counter.add(body.hasSuffix("\n") ? String(body.dropLast()) : body)
            }
        }
    }
    let running = Task { await receiver.run() }
    try await Task.sleep(for: .milliseconds(500))
    var results: [String: [Result]] = [:]
    for run in 0..<rounds {
        for tool in ["go-sendxmpp", "xmpp-bridge"] {
            let result = try await runOnce(tool: tool, server: server, counter: counter, run: run)
            results[tool, default: []].append(result)
        }
    }
    print("\nmod_mam \(archive ? "on" : "off"):")
    var medians: [String: Double] = [:]
    for tool in ["go-sendxmpp", "xmpp-bridge"] {
        let runs = results[tool] ?? []
        let rates = runs.map(\.linesPerSecond).sorted()
        let median = rates[rates.count / 2]
        medians[tool] = median
        let delivered = runs.map { "\($0.delivered)" }.joined(separator: "/")
        let exits = runs.map { $0.exit.map(String.init) ?? "?" }.joined(separator: "/")
        let order = runs.allSatisfy(\.inOrder) ? "in order" : "NOT in order"
        print(String(format: "  %-12@ delivered %@ of %d (%@), median %7.0f lines/s, exit codes %@",
                     tool as NSString, delivered as NSString, lineCount, order as NSString, median, exits as NSString))
    }
    if let mine = medians["xmpp-bridge"], let theirs = medians["go-sendxmpp"] {
        print(String(format: "  ratio xmpp-bridge/go-sendxmpp lines/s: %.2f×", mine / theirs))
    }
    await receiver.stop()
    _ = await running.value
    receiving.cancel()
}
