import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// The OMEMO device across restarts (issue 41): the same device after a stop, and after a
/// kill -9 in the middle of a burst nothing lost, nothing twice, nothing the phone cannot
/// decrypt (each session's state is committed before the message it encrypted is written).
extension OMEMOIntegrationTests {
    /// The scenario of these tests: account home an OMEMO device, bob's phone, a socket local.
    static func phoneScenario(encryption: String = "required", trust: String = "blind", archive: Bool = false) async throws -> DaemonScenario {
        var options = ProsodyServer.Options()
        options.archive = archive
        return try await DaemonScenario.start(
            accounts: ["home"], others: ["bob"], accountSettings: "omemo = true\nomemo_trust = \"\(trust)\"", rest: Self.channel(encryption: encryption),
            sockets: ["ops.sock"], server: options,
            prepare: { server in try await MirrorSupport.subscribeBothWays("bob", "home", on: server) }
        )
    }

    /// A client of the socket local, subscribed to the channel.
    static func ops(_ scenario: DaemonScenario) async throws -> UnixLineClient {
        let ops = try UnixLineClient(path: scenario.path("ops.sock"))
        try ops.send(#"{"subscribe":["phone"]}"#)
        guard await ops.readObject()?["ok"] as? String == "subscribed" else { throw TestFailure("the socket local did not subscribe") }
        return ops
    }

    @Test("a restart keeps the device: the same id, the sessions go on without a new key exchange")
    func restartKeepsDevice() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        try await Self.ops(scenario).send("before the restart")
        #expect(await phone.waitForMessage("before the restart")?.encrypted == true, "\(phone.events.map(\.fields)) \(scenario.bridge.run.errors.suffix(3000))")
        let created = scenario.bridge.logLines.first { $0.contains("OMEMO device created") }
        let device = try #require(created.flatMap { Self.field("device", in: $0) })

        #expect(scenario.bridge.stop() == 0)
        let again = try await scenario.startAgain(accounts: ["home"], sockets: ["ops.sock"])
        defer { again.terminate() }
        #expect(again.logLines.contains { $0.contains("OMEMO device restored") && Self.field("device", in: $0) == device }, "\(again.run.errors)")
        #expect(!again.logLines.contains { $0.contains("OMEMO device created") })
        try await Self.ops(scenario).send("after the restart")
        #expect(await phone.waitForMessage("after the restart")?.encrypted == true, "\(phone.events.map(\.fields)) \(again.run.errors.suffix(3000))")
        #expect(phone.undecryptable.isEmpty, "\(phone.undecryptable.map(\.fields))")

        // The phone's answer after the restart is read too.
        let ops = try await Self.ops(scenario)
        try phone.send("read you", to: "home@example.test")
        #expect(await ops.readLine(timeout: .seconds(20))?.contains("read you") == true, "\(again.run.errors.suffix(3000))")
    }

    @Test("kill -9 in the middle of a burst of 200: after the restart the phone has each message once, and decrypted every one")
    func killMidBurst() async throws {
        let scenario = try await Self.phoneScenario(archive: true)
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let ops = try await Self.ops(scenario)
        let count = 200
        for index in 0..<count { try ops.send("burst \(index)") }
        // Killed once part of the burst went out.
        let some = await eventually(timeout: .seconds(30)) { phone.messages.count >= 20 }
        #expect(some, "\(phone.events.suffix(3).map(\.fields)) \(scenario.bridge.run.errors.suffix(3000))")
        scenario.bridge.run.process.signal(SIGKILL)
        _ = scenario.bridge.run.finish(timeout: 10)
        let again = try await scenario.startAgain(accounts: ["home"], sockets: ["ops.sock"])
        defer { again.terminate() }
        let all = await eventually(timeout: .seconds(90)) { Set(phone.messages.compactMap(\.body)).count >= count }
        // A marker after the burst: nothing else comes after it.
        try await Self.ops(scenario).send("marker")
        #expect(await phone.waitForMessage("marker", timeout: .seconds(30)) != nil, "the marker after the burst")
        let bodies = phone.messages.compactMap(\.body).filter { $0.contains("burst ") }
        let distinct = Set(bodies)
        #expect(all && distinct.count == count, "lost \(count - distinct.count); \(again.run.errors.suffix(3000))")
        #expect(bodies.count == distinct.count, "twice: \(bodies.count - distinct.count)")
        #expect(phone.messages.allSatisfy { $0.encrypted })
        #expect(phone.undecryptable.isEmpty, "failed decryptions: \(phone.undecryptable.map(\.fields))")
    }

    @Test("kill -9 in the middle of a burst of 200 written into a FIFO: after the restart the phone has each line once, and decrypted every one")
    func killMidBurstFromFIFO() async throws {
        var options = ProsodyServer.Options()
        options.archive = true
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], others: ["bob"], accountSettings: "omemo = true",
            rest: """
                [local.alerts]
                kind = "fifo"
                path = "alerts.fifo"

                [channels.phone]
                format = "{body}"
                members = [
                  { account = "home", jid = "bob@example.test", encryption = "required" },
                  { local = "alerts", direction = "in" },
                ]
                """,
            server: options,
            prepare: { server in try await MirrorSupport.subscribeBothWays("bob", "home", on: server) }
        )
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let fifo = scenario.path("alerts.fifo")
        #expect(await scenario.bridge.waitForLog { $0.contains("reading FIFO") }, "\(scenario.bridge.run.errors.suffix(2000))")
        let count = 200
        // One write, as `command > fifo` does: the bridge reads it whole into its intake.
        try LocalSocket.writeFIFO(fifo, (0..<count).map { "burst \($0)\n" }.joined())
        let some = await eventually(timeout: .seconds(30)) { phone.messages.count >= 20 }
        #expect(some, "\(phone.events.suffix(3).map(\.fields)) \(scenario.bridge.run.errors.suffix(3000))")
        scenario.bridge.run.process.signal(SIGKILL)
        _ = scenario.bridge.run.finish(timeout: 10)
        let again = try await scenario.startAgain(accounts: ["home"])
        defer { again.terminate() }
        let all = await eventually(timeout: .seconds(90)) { Set(phone.messages.compactMap(\.body)).count >= count }
        #expect(await again.waitForLog { $0.contains("reading FIFO") }, "\(again.run.errors.suffix(2000))")
        try LocalSocket.writeFIFO(fifo, "marker\n")
        #expect(await phone.waitForMessage("marker", timeout: .seconds(30)) != nil, "the marker after the burst")
        let bodies = phone.messages.compactMap(\.body).filter { $0.hasPrefix("burst ") }
        let distinct = Set(bodies)
        print("[omemo] kill -9 mid burst of \(count) from a FIFO: the phone received \(bodies.count), lost \(count - distinct.count), twice \(bodies.count - distinct.count)")
        #expect(all && distinct.count == count, "lost \(count - distinct.count); \(again.run.errors.suffix(3000))")
        #expect(bodies.count == distinct.count, "twice: \(bodies.count - distinct.count)")
        #expect(phone.messages.allSatisfy { $0.encrypted })
        #expect(phone.undecryptable.isEmpty, "failed decryptions: \(phone.undecryptable.map(\.fields))")
    }

    /// `name=value` in a log line.
    static func field(_ name: String, in line: Substring) -> String? {
        guard let range = line.range(of: "\(name)=") else { return nil }
        return String(line[range.upperBound...].prefix { !$0.isWhitespace })
    }
}
