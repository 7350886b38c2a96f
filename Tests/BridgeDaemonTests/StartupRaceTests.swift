import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

/// `xmpp-bridge status` polled while `run` starts (issue 13, defect 1): before, the command
/// opened and migrated the state database itself and the daemon exited 2 ("table routes
/// already exists", "database is locked") in about a third of the starts.
@Suite("status polled while the daemon starts", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct StartupRaceTests {
    @Test("10 fresh starts, each with status polled from the first moment: every daemon comes up; status says 'starting' (75) or answers (0)")
    func statusDuringStart() async throws {
        let server = try await ProsodyServer.started(accounts: DaemonScenario.users("alice", "work"))
        defer { server.shutdown() }
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work"],
            rest: """
                [channels.link]
                members = [{ account = "work", jid = "alice@example.test" }]
                """
        )
        var answers: [Int32: Int] = [:]
        for round in 1...10 {
            // A fresh state database each round: the daemon migrates it while status runs.
            for suffix in ["", "-wal", "-shm", ".lock"] {
                try? FileManager.default.removeItem(atPath: "\(server.directory)/bridge.sqlite\(suffix)")
            }
            let daemon = try BridgeDaemon.start(config: config, in: server.directory)
            defer { daemon.terminate() }
            var answered = false
            for _ in 0..<300 where !answered {
                let status = try CommandLineTests.start(["status", "--config", config], in: server.directory)
                let code = status.finish(timeout: 20) ?? -1
                answers[code, default: 0] += 1
                #expect(code == 0 || code == 75, "round \(round): status exited \(code): \(status.errors)")
                // Answered by the daemon itself once its account is connected.
                answered = code == 0 && status.output.contains("work [xmpp]  connected")
                guard daemon.run.process.isRunning else { break }
            }
            #expect(daemon.run.process.isRunning, "round \(round): the daemon died while status was polled: \(daemon.run.errors)")
            try await daemon.waitOnline(["work"])
            #expect(daemon.stop() == 0, "round \(round): \(daemon.run.errors)")
        }
        print("[startup-race] status exit codes over 10 starts: \(answers.sorted { $0.key < $1.key })")
    }
}
