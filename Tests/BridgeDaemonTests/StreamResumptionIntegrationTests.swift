import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// Stream management resumption (XEP-0198 §5; issue 9) with the real daemon: a connection
/// lost with deliveries in flight is resumed, so nothing is lost and nothing is sent twice.
@Suite("stream resumption against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct StreamResumptionIntegrationTests {
    @Test("Prosody frozen with 100 deliveries in flight: the delivery timeout drops the connection, the bridge resumes it after the thaw, and bob gets all 150 once, in order")
    func resumeAfterDeliveryTimeout() async throws {
        try await Self.frozenServer(
            setting: ("[bridge]\n", "[bridge]\ndelivery_timeout_ms = 300\n"),
            dropped: "delivery not taken in time; dropping the connection"
        )
    }

    @Test("Prosody frozen with 100 deliveries in flight: ack_timeout finds the dead link long before the delivery timeout, and bob gets all 150 once, in order")
    func resumeAfterAcknowledgementTimeout() async throws {
        try await Self.frozenServer(
            setting: ("resource = \"bridge\"\n", "resource = \"bridge\"\nack_timeout = \"1s\"\n"),
            dropped: "ack_timeout=1.0 seconds", "no acknowledgement from the server in time; dropping the connection to resume"
        )
    }

    /// Freezes the server (SIGSTOP) with deliveries in flight, waits for a bridge log line
    /// holding every part of `dropped`, thaws it and counts what bob got. `setting` edits
    /// the configuration.
    static func frozenServer(setting: (String, String), dropped expectedLog: String...) async throws {
        let server = try await ProsodyServer.started(accounts: [("bob", "pw"), ("home", "pw")])
        defer {
            server.resume()
            server.shutdown()
        }
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["home"],
            rest: """
                [local.ops]
                kind = "socket"
                path = "ops.sock"

                [channels.ops]
                format = "{body}"
                members = [
                  { local = "ops", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        var text = try String(contentsOfFile: config, encoding: .utf8)
        text = text.replacingOccurrences(of: setting.0, with: setting.1)
        #expect(text.contains(setting.1), "the setting under test is in the configuration")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let path = "\(server.directory)/ops.sock"

        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        try await bridge.waitForSocket(path)
        #expect(await bridge.waitForLog { $0.contains("account=home@example.test") && $0.contains("stream management enabled") })
        let bob = try await TestSession.start("bob", on: server)
        let client = try UnixLineClient(path: path)
        let sent = (1...150).map { String(format: "resume %03d", $0) }
        func send(_ bodies: ArraySlice<String>) async throws {
            for body in bodies { try client.send(#"{"channel":"ops","body":"\#(body)","ack":true}"#) }
            for _ in bodies { #expect(await client.readObject()?["ok"] as? String == "queued") }
        }
        try await send(sent.prefix(50))
        _ = await Received.bodies(bob.log, count: 50, timeout: .seconds(30))

        // Frozen server: the next deliveries go out and are never confirmed.
        server.pause()
        try await send(sent.dropFirst(50))
        let dropped = await bridge.waitForLog { line in expectedLog.allSatisfy { line.contains($0) } }
        server.resume()
        #expect(dropped, "stderr: \(bridge.run.errors.suffix(2000))")
        let resumed = await bridge.waitForLog(timeout: .seconds(60)) { $0.contains("stream resumed") }
        #expect(resumed, "stderr: \(bridge.run.errors.suffix(3000))")

        try await send(["marker"])
        #expect(await Received.message(bob.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let received = await Received.bodies(bob.log).filter { $0 != "marker" }
        let duplicated = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.count
        print("resumption with deliveries in flight: received \(received.count), distinct \(Set(received).count), duplicated \(duplicated)")
        #expect(received == sent, "lost \(sent.filter { !received.contains($0) }.count), duplicated \(duplicated)")
        client.close()
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await bob.stop()
    }
}
