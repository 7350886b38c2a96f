import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

/// Whom the bridge encrypts to (issue 41): `required` waits, visibly, for a trusted device;
/// `manual` trust waits for `omemo trust`; a contact's second device gets the next message.
extension OMEMOIntegrationTests {
    @Test("required: with no device of the contact the delivery waits in `queue list`; once the phone publishes one, it goes, encrypted")
    func requiredWaitsForDevice() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        try await Self.ops(scenario).send("waits for a device")
        let listed = await eventuallyValue(timeout: .seconds(20)) { () -> String? in
            let run = try? MirrorSupport.command(["queue", "list", "--config", scenario.config], in: scenario.server.directory)
            return run.flatMap { $0.output.contains("no trusted OMEMO device") ? $0.output : nil }
        }
        #expect(listed != nil, "\(scenario.bridge.run.errors.suffix(3000))")

        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let received = await phone.waitForMessage("waits for a device", timeout: .seconds(30))
        #expect(received?.encrypted == true, "\(phone.events.map(\.fields)) \(scenario.bridge.run.errors.suffix(3000))")
        #expect(!phone.messages.contains { !$0.encrypted }, "nothing as plaintext")
    }

    @Test("manual trust: the phone's device waits until `omemo trust` names its fingerprint, then gets the message; `omemo fingerprints` lists both devices")
    func manualTrust() async throws {
        let scenario = try await Self.phoneScenario(trust: "manual")
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        try await Self.ops(scenario).send("for verified devices only")
        // The phone's key seen (its bundle), not trusted: listed as undecided.
        let undecided = await eventuallyValue(timeout: .seconds(20)) { () -> [String: Any]? in
            guard let run = try? MirrorSupport.command(["omemo", "fingerprints", "home", "--json", "--config", scenario.config], in: scenario.server.directory),
                let listing = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any],
                let devices = listing["devices"] as? [[String: Any]]
            else { return nil }
            return devices.first { $0["jid"] as? String == "bob@example.test" && $0["trust"] as? String == "undecided" }
        }
        let device = try #require(undecided, "\(scenario.bridge.run.errors.suffix(3000))")
        #expect(device["device"] as? Int == phone.device)
        #expect(phone.messages.isEmpty, "nothing before the decision")
        let fingerprint = try #require(device["fingerprint"] as? String)

        // As a user pastes it: upper case, the leading 05.
        let trusted = try MirrorSupport.command(["omemo", "trust", "home", "bob@example.test", "05" + fingerprint.uppercased(), "--config", scenario.config], in: scenario.server.directory)
        #expect(trusted.output.contains("verified"), "\(trusted.errors)")
        let received = await phone.waitForMessage("for verified devices only", timeout: .seconds(30))
        #expect(received?.encrypted == true, "\(phone.events.map(\.fields)) \(scenario.bridge.run.errors.suffix(3000))")

        // A fingerprint that is not one: a clear refusal.
        let bad = try MirrorSupport.command(["omemo", "trust", "home", "bob@example.test", "abc", "--config", scenario.config], in: scenario.server.directory)
        #expect(bad.errors.contains("is not a fingerprint"), "\(bad.output) \(bad.errors)")
    }

    @Test("a second device of the contact gets the next message; both decrypt it")
    func secondDevice() async throws {
        let scenario = try await Self.phoneScenario()
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let ops = try await Self.ops(scenario)
        try ops.send("to the first phone")
        #expect(await phone.waitForMessage("to the first phone")?.encrypted == true)

        let tablet = try await OMEMOPhone.start("bob", on: scenario.server, data: "tablet")
        defer { tablet.stop() }
        #expect(tablet.device != phone.device)
        // The bridge hears of the new device list (PEP notification) before the next message.
        let seen = await eventually(timeout: .seconds(20)) {
            let run = try? MirrorSupport.command(["omemo", "fingerprints", "home", "--config", scenario.config], in: scenario.server.directory)
            return run?.output.contains("device \(tablet.device)") == true
        }
        #expect(seen, "\(scenario.bridge.run.errors.suffix(3000))")
        try ops.send("to both devices")
        #expect(await phone.waitForMessage("to both devices")?.encrypted == true)
        #expect(await tablet.waitForMessage("to both devices")?.encrypted == true, "\(tablet.events.map(\.fields))")
        #expect(phone.undecryptable.isEmpty && tablet.undecryptable.isEmpty)
    }
}
