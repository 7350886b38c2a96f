import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

/// The OMEMO device on ejabberd (issue 41): its PEP (mod_pep) with the same phone.
@Suite("OMEMO against a real ejabberd and slixmpp-omemo", .serialized, .enabled(if: IntegrationEnvironment.ejabberdEnabled), .timeLimit(.minutes(3)))
struct OMEMOEjabberdIntegrationTests {
    @Test("encrypted both ways, and after a restart of the bridge still the same device")
    func bothWaysAndRestart() async throws {
        let server = try EjabberdServer.start(accounts: [("bob", "pw"), ("home", "pw")])
        defer { server.shutdown() }
        try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
        let config = try BridgeConfigFile.write(for: server, accounts: ["home"], accountSettings: "omemo = true", rest: OMEMOIntegrationTests.channel(encryption: "required"))
        var bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        try await bridge.waitForSocket("\(server.directory)/ops.sock")
        let phone = try await OMEMOPhone.start("bob", on: server)
        defer { phone.stop() }

        func ops() async throws -> UnixLineClient {
            let ops = try UnixLineClient(path: "\(server.directory)/ops.sock")
            try ops.send(#"{"subscribe":["phone"]}"#)
            guard await ops.readObject()?["ok"] as? String == "subscribed" else { throw TestFailure("not subscribed") }
            return ops
        }
        try await ops().send("hello from ejabberd")
        #expect(await phone.waitForMessage("hello from ejabberd")?.encrypted == true, "\(phone.events.map(\.fields)) \(phone.errors.suffix(2000)) \(bridge.run.errors.suffix(3000))")
        let listening = try await ops()
        try phone.send("answer over ejabberd", to: "home@example.test")
        #expect(await listening.readLine(timeout: .seconds(20))?.contains("answer over ejabberd") == true, "\(bridge.run.errors.suffix(3000))")

        #expect(bridge.stop() == 0)
        bridge = try BridgeDaemon.start(config: config, in: server.directory)
        try await bridge.waitOnline(["home"])
        try await bridge.waitForSocket("\(server.directory)/ops.sock")
        #expect(bridge.logLines.contains { $0.contains("OMEMO device restored") }, "\(bridge.run.errors)")
        try await ops().send("after the restart")
        #expect(await phone.waitForMessage("after the restart")?.encrypted == true, "\(phone.events.map(\.fields)) \(bridge.run.errors.suffix(3000))")
        #expect(phone.undecryptable.isEmpty, "\(phone.undecryptable.map(\.fields))")
    }
}
