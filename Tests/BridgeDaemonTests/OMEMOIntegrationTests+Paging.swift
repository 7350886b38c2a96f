import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import ThrowawayProsody

#if canImport(Glibc)
import Glibc
#endif

/// Paging an OMEMO phone (issue 41, item 6): the alert reaches it encrypted, and its
/// encrypted answer acknowledges the page as an unencrypted one does.
extension OMEMOIntegrationTests {
    @Test("a critical alert reaches the phone encrypted; its encrypted 'ack' acknowledges the page (the subscriber told: by bob, by command) and the acknowledgement comes back encrypted")
    func encryptedAcknowledgement() async throws {
        let token = "omemo-paging-token"
        let port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], others: ["bob", "alice"], accountSettings: "omemo = true",
            rest: PagingIntegrationTests.oncall(
                port: port, member: #"{ account = "home", jid = "bob@example.test", direction = "out", encryption = "required" }"#,
                channel: #"escalate = [ { after = "60s", to = [ { account = "home", jid = "alice@example.test" } ] } ]"#
            ),
            sockets: ["sub.sock"],
            prepare: { server in
                try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
                try "\(token)\n".write(toFile: "\(server.directory)/web.token", atomically: true, encoding: .utf8)
                chmod("\(server.directory)/web.token", 0o600)
            }
        )
        defer { scenario.shutdown() }
        let subscriber = try UnixLineClient(path: scenario.path("sub.sock"))
        try subscriber.send(#"{"subscribe":["oncall"]}"#)
        #expect(await subscriber.readObject()?["ok"] as? String == "subscribed")
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }

        let posted = try await HTTPTestClient(target: .tcp(port: port)).post("/channels/oncall", token: token, headers: ["X-Priority": "5"], body: "db1 down")
        #expect(posted.status == 202, "\(posted)")
        let alert = await phone.waitForMessage("db1 down")
        #expect(alert?.encrypted == true, "phone: \(phone.events.map(\.fields)) bridge: \(scenario.bridge.run.errors.suffix(3000))")

        try phone.send("ack", to: "home@example.test")
        var event: [String: Any]?
        while event == nil, let line = await subscriber.readObject(timeout: .seconds(20)) {
            if line["event"] as? String == "acknowledged" { event = line }
        }
        #expect(event?["by"] as? String == "bob@example.test" && event?["how"] as? String == "command", "\(String(describing: event)) bridge: \(scenario.bridge.run.errors.suffix(3000))")
        let told = await phone.waitForMessage("acknowledged by bob@example.test")
        #expect(told?.encrypted == true, "phone: \(phone.events.map(\.fields))")
        #expect(phone.undecryptable.isEmpty, "\(phone.undecryptable.map(\.fields))")
        subscriber.close()
    }
}
