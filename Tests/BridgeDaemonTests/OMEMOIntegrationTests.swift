import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

/// The bridge as an OMEMO device (issue 41) with the real daemon, a real Prosody and a real
/// OMEMO phone (slixmpp-omemo, ``OMEMOPhone``): what a local writes reaches the phone
/// encrypted and readable; what the phone writes encrypted reaches the local as text.
@Suite("OMEMO against a real Prosody and slixmpp-omemo", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct OMEMOIntegrationTests {
    /// A channel of the account's contact bob (the phone) and a socket local.
    static func channel(encryption: String) -> String {
        """
        [local.ops]
        kind = "socket"
        path = "ops.sock"

        [channels.phone]
        members = [
          { account = "home", jid = "bob@example.test", encryption = "\(encryption)" },
          { local = "ops" },
        ]
        """
    }

    @Test("encrypted both ways: a line from the local reaches the phone encrypted, the phone's encrypted answer reaches the local as text")
    func bothWays() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let ops = try await Self.ops(scenario)

        try ops.send("disk almost full")
        let received = await phone.waitForMessage("disk almost full")
        #expect(received?.encrypted == true, "phone: \(phone.events.map(\.fields)) \(phone.errors.suffix(2000)) bridge: \(scenario.bridge.run.errors.suffix(4000))")
        #expect(phone.undecryptable.isEmpty, "\(phone.undecryptable.map(\.fields))")

        try phone.send("acknowledged", to: "home@example.test")
        let line = await ops.readLine(timeout: .seconds(20))
        #expect(line?.contains("acknowledged") == true, "local: \(line ?? "nothing") phone: \(phone.events.map(\.fields)) bridge: \(scenario.bridge.run.errors.suffix(6000))")
    }

    @Test("a burst of 120 encrypted messages written at once: the bridge reads them together and the local gets each once, in order, as text")
    func burstFromThePhone() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let ops = try await Self.ops(scenario)
        // A session first, as after a first exchange: the bridge's message, the phone's answer.
        try ops.send("hello phone")
        #expect(await phone.waitForMessage("hello phone") != nil, "bridge: \(scenario.bridge.run.errors.suffix(4000))")

        let texts = (1...120).map { "reply \($0)" }
        try phone.sendBurst(texts + ["end of burst"], to: "home@example.test")
        var bodies: [String] = []
        while let line = await ops.readObject(timeout: .seconds(30)), let body = line["body"] as? String {
            bodies.append(String(body.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces))
            if body.hasSuffix("end of burst") { break }
        }
        #expect(bodies == texts + ["end of burst"], "got \(bodies.count): \(bodies.prefix(5)) … phone: \(phone.errors.suffix(2000)) bridge: \(scenario.bridge.run.errors.suffix(4000))")
    }
}
