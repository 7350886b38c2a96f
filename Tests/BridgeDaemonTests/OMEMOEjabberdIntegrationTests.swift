import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The OMEMO device on ejabberd (issue 41): its PEP (mod_pep) with the same phone.
@Suite("OMEMO against a real ejabberd and slixmpp-omemo", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.ejabberdEnabled), .timeLimit(.minutes(3)))
struct OMEMOEjabberdIntegrationTests {
    /// bob and home subscribed both ways, and the bridge's configuration: home an OMEMO
    /// device, bob's member `required`, the socket local `ops`.
    static func configure(_ server: EjabberdServer) async throws -> String {
        try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
        return try BridgeConfigFile.write(for: server, accounts: ["home"], accountSettings: "omemo = true", rest: OMEMOIntegrationTests.channel(encryption: "required"))
    }

    /// The bridge on `config`, started (again) and waited for: home online, `ops` listening.
    static func bridge(_ config: String, on server: EjabberdServer) async throws -> BridgeDaemon {
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        do {
            try await bridge.waitOnline(["home"])
            try await bridge.waitForSocket("\(server.directory)/ops.sock")
        } catch {
            bridge.terminate()
            throw error
        }
        return bridge
    }

    @Test("encrypted both ways, and after a restart of the bridge still the same device")
    func bothWaysAndRestart() async throws {
        let server = try await EjabberdServer.started(accounts: [("bob", "pw"), ("home", "pw")])
        defer { server.shutdown() }
        let config = try await Self.configure(server)
        var bridge = try await Self.bridge(config, on: server)
        defer { bridge.terminate() }
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
        bridge = try await Self.bridge(config, on: server)
        #expect(bridge.logLines.contains { $0.contains("OMEMO device restored") }, "\(bridge.run.errors)")
        try await ops().send("after the restart")
        #expect(await phone.waitForMessage("after the restart")?.encrypted == true, "\(phone.events.map(\.fields)) \(bridge.run.errors.suffix(3000))")
        #expect(phone.undecryptable.isEmpty, "\(phone.undecryptable.map(\.fields))")
    }

    @Test("kill -9 in the middle of a burst of 200: after the restart the phone has every message, none relayed twice, and decrypted every one")
    func killMidBurst() async throws {
        let server = try await EjabberdServer.started(accounts: [("bob", "pw"), ("home", "pw")])
        defer { server.shutdown() }
        let config = try await Self.configure(server)
        let bridge = try await Self.bridge(config, on: server)
        defer { bridge.terminate() }
        let phone = try await OMEMOPhone.start("bob", on: server)
        defer { phone.stop() }
        let ops = try UnixLineClient(path: "\(server.directory)/ops.sock")
        let count = 200
        for index in 0..<count { try ops.send("burst \(index)") }
        let some = await eventually(timeout: .seconds(30)) { phone.messages.count >= 20 }
        #expect(some, "\(phone.events.suffix(3).map(\.fields)) \(bridge.run.errors.suffix(3000))")
        kill(bridge.run.process.pid, SIGKILL)
        _ = bridge.run.finish(timeout: 10)
        let again = try await Self.bridge(config, on: server)
        defer { again.terminate() }
        let all = await eventually(timeout: .seconds(90)) { Set(phone.messages.compactMap(\.body)).count >= count }
        try UnixLineClient(path: "\(server.directory)/ops.sock").send("marker")
        #expect(await phone.waitForMessage("marker", timeout: .seconds(30)) != nil, "the marker after the burst")
        let bodies = phone.messages.compactMap(\.body).filter { $0.contains("burst ") }
        let distinct = Set(bodies)
        print("[omemo] ejabberd, kill -9 mid burst of \(count): the phone received \(bodies.count), lost \(count - distinct.count), twice \(bodies.count - distinct.count)")
        #expect(all && distinct.count == count, "lost \(count - distinct.count); \(again.run.errors.suffix(3000))")
        // ejabberd has been seen to deliver the last few stanzas written before the kill and
        // still report an h without them (as in InteropIntegrationTests): the bridge sends
        // those again with the same id and origin-id (XEP-0359), which clients drop as a
        // repeat. Counted and printed; a second relay (a new id) would be a failure.
        let repeated = Set(Dictionary(grouping: bodies, by: { $0 }).filter { $0.value.count > 1 }.keys)
        let secondRelays = repeated.filter { body in Set(phone.messages.filter { $0.body == body }.map { $0.fields["id"] as? String ?? "-" }).count > 1 }
        print("[omemo] ejabberd, kill -9 mid burst: the same stanza again (same id) \(repeated.count - secondRelays.count), relayed twice \(secondRelays.count)")
        #expect(secondRelays.isEmpty, "relayed twice: \(phone.messages.filter { secondRelays.contains($0.body ?? "") }.map(\.fields)); \(again.run.errors.suffix(2000))")
        #expect(phone.messages.allSatisfy { $0.encrypted })
        #expect(phone.undecryptable.isEmpty, "failed decryptions: \(phone.undecryptable.map(\.fields))")
    }
}
