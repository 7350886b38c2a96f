import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// OMEMO (issue 41) on several instances: the device's keys, sessions and trust live in the
/// shared PostgreSQL state, so the instance that takes an account over after a kill -9 is the
/// same device, its sessions where the dead one left them.
extension SeveralInstancesIntegrationTests {
    @Test("kill -9 of the owner of an OMEMO account mid burst to the phone, 150 more sent while home has no owner: the other takes over as the same device; the phone has each of the 300 once and decrypted every one")
    func killedOMEMOOwner() async throws {
        var options = ProsodyServer.Options()
        options.archive = true
        let server = try await ProsodyServer.started(options, accounts: DaemonScenario.users("alice", "bob", "work", "home"))
        defer { server.shutdown() }
        try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
        let phone = try await OMEMOPhone.start("bob", on: server)
        defer { phone.stop() }
        let bridges = try await Self.start(on: server, omemo: true)
        defer { bridges.forEach { $0.terminate() } }
        let alice = try await TestSession.start("alice", on: server)
        guard let homeOwner = await Self.owner(of: "home", among: bridges), let workOwner = await Self.owner(of: "work", among: bridges) else {
            Issue.record("no instance took the leases; stderr:\n\(bridges.map { $0.run.errors.suffix(3000) }.joined(separator: "\n---\n"))")
            return
        }
        try await bridges[homeOwner].waitOnline(["home"])
        try await bridges[workOwner].waitOnline(["work"])
        #expect(await alice.waitForServerUptime(atLeast: Self.ttl + 3), "the server does not report its uptime (XEP-0012)")
        let device = { (bridge: BridgeDaemon) in bridge.logLines.compactMap { $0.contains("OMEMO device created") ? OMEMOIntegrationTests.field("device", in: $0) : nil } }

        let sent = (1...300).map { String(format: "burst %03d", $0) }
        try await Self.send(sent.prefix(150), from: alice)
        let some = await eventually(timeout: .seconds(60)) { phone.messages.count >= 30 }
        #expect(some, "phone: \(phone.events.suffix(3).map(\.fields)) \(phone.errors.suffix(1500)) bridge: \(bridges[homeOwner].run.errors.suffix(3000))")
        kill(bridges[homeOwner].run.process.pid, SIGKILL)
        _ = bridges[homeOwner].run.finish(timeout: 10)
        // The rest while home has no owner: the next owner encrypts them in the sessions
        // the dead one left in the shared state.
        try await Self.send(sent.dropFirst(150), from: alice)
        let other = bridges[1 - homeOwner]
        #expect(await other.waitForLog(timeout: .seconds(Self.ttl + 5 + 10)) { $0.contains("lease taken; starting") && $0.contains("resource=home") }, "stderr: \(other.run.errors.suffix(3000))")
        // The phone opens messages side by side (slixmpp-omemo's first ones, from a device it
        // did not know at its start, take it seconds): all of them first, then the marker.
        let all = await eventually(timeout: .seconds(90)) { Set(phone.messages.compactMap(\.body)).count >= sent.count }
        try await Self.send(["marker"], from: alice)
        let marker = await phone.waitForMessage("[work] alice: marker", timeout: .seconds(90))
        #expect(marker != nil, "phone: \(phone.events.suffix(3).map(\.fields)) bridge: \(other.run.errors.suffix(3000))")

        let bodies = phone.messages.compactMap(\.body).filter { $0.hasPrefix("[work] alice: burst ") }.map { String($0.dropFirst("[work] alice: ".count)) }
        let missing = Set(sent).subtracting(bodies).sorted()
        let lost = missing.count
        let twice = bodies.count - Set(bodies).count
        print("[omemo] kill -9 of the owner mid burst of 300, two instances: the phone received \(bodies.count), lost \(lost) \(missing.prefix(12)), twice \(twice)")
        #expect(all && lost == 0, "lost \(lost): \(missing.prefix(20)); the phone's events: \(Dictionary(grouping: phone.events, by: \.kind).mapValues(\.count)) \(phone.errors.suffix(3000)); the dead owner: \(bridges[homeOwner].run.errors.suffix(3000)) the new owner: \(other.run.errors.suffix(5000))")
        #expect(twice == 0, "twice \(twice)")
        #expect(phone.messages.allSatisfy { $0.encrypted }, "every message encrypted")
        #expect(phone.undecryptable.isEmpty, "failed decryptions: \(phone.undecryptable.map(\.fields))")
        // One device, made once by the first owner: the new owner read it from the shared
        // state (a second "created" would be a new device and a warning on the phone).
        #expect(device(bridges[homeOwner]).count == 1 && device(other).isEmpty, "devices created: \(device(bridges[homeOwner])) then \(device(other))")
        #expect(other.stop() == 0, "stderr: \(other.run.errors.suffix(2000))")
        await alice.stop()
    }
}
