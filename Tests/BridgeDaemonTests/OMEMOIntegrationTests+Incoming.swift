import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// What the phone sends encrypted, across a kill -9 of the bridge (issue 41): a link of two
/// accounts, the phone's encrypted burst read by one (an OMEMO device) and relayed as text
/// by the other. Ratchet steps of received messages go to the journal after the messages
/// they opened, so after the restart nothing is lost, nothing relayed twice, and nothing the
/// server hands over again is refused as undecryptable.
extension OMEMOIntegrationTests {
    @Test("kill -9 in the middle of an encrypted burst of 200 from the phone (phone → home → work → alice): alice gets each once, as text, and the phone no notice")
    func killMidIncomingBurst() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["home", "work"], others: ["bob", "alice"], accountSettings: "omemo = true",
            rest: """
                [channels.link]
                format = "{body}"
                members = [
                  { account = "home", jid = "bob@example.test", encryption = "required", direction = "in" },
                  { account = "work", jid = "alice@example.test", encryption = "none", direction = "out" },
                ]
                """,
            prepare: { server in try await MirrorSupport.subscribeBothWays("bob", "home", on: server) }
        )
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let alice = try await TestSession.start("alice", on: scenario.server)
        // The phone's first message starts the session (a key exchange), as a phone does
        // once it has read the account's devices.
        _ = await eventually(timeout: .seconds(20)) { scenario.bridge.logLines.contains { $0.contains("account=home") && $0.contains("OMEMO device added") } }
        try await phone.refresh("home@example.test")
        try phone.send("hello", to: "home@example.test")
        #expect(await Received.message(alice.log, body: "hello", timeout: .seconds(30)) != nil, "phone: \(phone.events.map(\.fields)) \(phone.errors.suffix(1500)) bridge: \(scenario.bridge.run.errors.suffix(3000))")

        let sent = (1...200).map { String(format: "burst %03d", $0) }
        try phone.sendBurst(sent, to: "home@example.test")
        _ = await Received.bodies(alice.log, count: 30, timeout: .seconds(30))
        scenario.bridge.run.process.signal(SIGKILL)
        _ = scenario.bridge.run.finish(timeout: 10)
        let atKill = await Received.bodies(alice.log).count
        let again = try await scenario.startAgain(accounts: ["home", "work"])
        defer { again.terminate() }

        try phone.send("marker", to: "home@example.test")
        #expect(await Received.message(alice.log, body: "marker", timeout: .seconds(60)) != nil, "bridge: \(again.run.errors.suffix(4000))")
        // What the server still held for the killed session may come after the marker.
        _ = await Received.bodies(alice.log, count: sent.count + 2, timeout: .seconds(10))
        let received = await Received.bodies(alice.log).filter { $0.hasPrefix("burst ") }
        let lost = sent.filter { !received.contains($0) }
        let twice = received.count - Set(received).count
        print("[omemo] kill -9 mid incoming burst: alice had \(atKill) at the kill; received \(Set(received).count) distinct of \(sent.count), lost \(lost.count), twice \(twice)")
        #expect(lost.isEmpty, "lost: \(lost.prefix(20)); bridge: \(again.run.errors.suffix(4000))")
        #expect(twice == 0)
        #expect(!phone.messages.contains { $0.body?.contains("could not decrypt") == true }, "\(phone.messages.map(\.fields))")
        #expect(!again.logLines.contains { $0.contains("OMEMO message not decrypted") }, "\(again.run.errors.suffix(4000))")
        await alice.stop()
    }
}
