import Foundation
import IntegrationSupport
import OMEMO
import TestServers
import TestSupport
import Testing
import XMPP

/// What a hostile or broken peer sends an OMEMO account (issue 41): each is a clear log
/// line (and a notice to a member who sent an unreadable message), never a crash, and the
/// bridge goes on relaying.
extension OMEMOIntegrationTests {
    @Test("a malformed <encrypted>, one not for our device, a device list flood and a bundle with a bad signature: log lines and notices, and the bridge relays on")
    func badInput() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], contacts: ["mallory"], accountSettings: "omemo = true",
            rest: """
                [local.ops]
                kind = "socket"
                path = "ops.sock"

                [channels.phone]
                members = [ { account = "home", jid = "mallory@example.test" }, { local = "ops" } ]
                """,
            sockets: ["ops.sock"],
            prepare: { server in try await MirrorSupport.subscribeBothWays("mallory", "home", on: server) }
        )
        defer { scenario.shutdown() }
        let mallory = try scenario.contact("mallory")
        let home = try JID("home@example.test")
        let bridge = scenario.bridge

        // Not an <encrypted> at all: no header.
        var broken = Message(type: .chat, to: home, id: "bad-1", body: "fallback")
        broken.extensions.append(XMLElement(name: "encrypted", namespace: OMEMOWire.namespace))
        try await mallory.session.send(broken)
        #expect(await bridge.waitForLog { $0.contains("OMEMO message refused") && $0.contains("no <header>") }, "\(bridge.run.errors.suffix(3000))")
        let notice = await Received.message(mallory.log, timeout: .seconds(15)) { $0.body?.contains("could not decrypt") == true }
        #expect(notice != nil, "\(bridge.run.errors.suffix(3000))")

        // A device list of 1,000 devices, pushed to the bridge by PEP.
        _ = try await mallory.session.request(IQ(type: .set, id: "flood", payload: OMEMOPubSub.publish(OMEMODeviceList(1...1000))))
        #expect(await bridge.waitForLog { $0.contains("OMEMO device list refused") && $0.contains("more than the limit") }, "\(bridge.run.errors.suffix(3000))")

        // One device whose bundle's signature is not its identity's.
        _ = try await mallory.session.request(IQ(type: .set, id: "list", payload: OMEMOPubSub.publish(OMEMODeviceList([77]))))
        func key(_ fill: UInt8) -> [UInt8] { [0x05] + Array(repeating: fill, count: 32) }
        let forged = OMEMOBundle(identityKey: key(1), signedPreKeyID: 1, signedPreKey: key(2), signedPreKeySignature: Array(repeating: 3, count: 64), preKeys: [.init(id: 1, key: key(4))])
        _ = try await mallory.session.request(IQ(type: .set, id: "bundle", payload: OMEMOPubSub.publish(forged, device: 77)))
        // Well formed, for another device only, from a device mallory now lists: its repair
        // finds the forged bundle and says so.
        var elsewhere = Message(type: .chat, to: home, id: "bad-2", body: "fallback")
        elsewhere.extensions.append(OMEMOEncrypted(senderDevice: 77, keys: [.init(device: 1, startsSession: true, data: [1, 2, 3])], iv: Array(repeating: 0, count: 12), payload: [1]).element)
        try await mallory.session.send(elsewhere)
        #expect(await bridge.waitForLog { $0.contains("OMEMO message not decrypted") && $0.contains("no key for this device") }, "\(bridge.run.errors.suffix(3000))")
        #expect(await bridge.waitForLog { $0.contains("OMEMO session not repaired") && $0.contains("not signed by its identity") }, "\(bridge.run.errors.suffix(3000))")
        let ops = try await Self.ops(scenario)
        try ops.send("still here")
        // Not encrypted to a device whose bundle is forged: with encryption "omemo", plaintext.
        let plain = await Received.message(mallory.log, timeout: .seconds(20)) { $0.body?.hasSuffix("still here") == true }
        #expect(plain != nil && OMEMOMessage.encryptedElement(of: plain!) == nil, "\(bridge.run.errors.suffix(3000))")
        #expect(bridge.logLines.contains { $0.contains("OMEMO device passed over") && $0.contains("mallory@example.test/77") })
        #expect(bridge.run.process.isRunning)
    }

    @Test("another client of the account publishes a device list without the bridge's device: the bridge puts its device back on the list")
    func deviceListPutBack() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        let bridge = scenario.bridge
        let created = await eventuallyValue(timeout: .seconds(20), every: .milliseconds(50)) { () -> UInt32? in
            bridge.logLines.first { $0.contains("OMEMO device added") }.flatMap { Self.field("device", in: $0) }.flatMap { UInt32($0) }
        }
        let device = try #require(created, "\(bridge.run.errors.suffix(3000))")
        // A phone of the same account, unaware of the bridge, publishes its own list.
        let other = try await TestSession.start("home", on: scenario.server, resource: "phone")
        _ = try await other.session.request(IQ(type: .set, id: "mine", payload: OMEMOPubSub.publish(OMEMODeviceList([4242]))))
        #expect(await bridge.waitForLog { $0.contains("OMEMO device put back on the account's device list") }, "\(bridge.run.errors.suffix(3000))")
        let result = try await other.session.request(IQ(type: .get, id: "read", to: try JID("home@example.test"), payload: OMEMOPubSub.fetch(node: OMEMOWire.deviceListNode)))
        let list = try OMEMODeviceList(element: try #require(OMEMOPubSub.payload(ofResult: result.payload)), limit: 64)
        #expect(list.contains(device) && list.contains(4242), "the other client's device kept, ours back: \(list)")
        await other.stop()
    }
}
