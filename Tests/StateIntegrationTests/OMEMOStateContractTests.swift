import Foundation
import IntegrationSupport
import OMEMOState
import Testing

@testable import BridgeRelay
@testable import BridgeState

extension StateIntegration {
    /// An OMEMO account's state (issue 41) through the journal in both stores, and through
    /// the intake log's codec: a device made, keys changed and removed, trust and device
    /// lists, a new device replacing everything; read back the same.
    @Suite("OMEMO state, both stores")
    struct OMEMOStateContractTests {
        static func keys(device: UInt32) -> OMEMOKeys {
            OMEMOKeys(
                deviceID: device, identityPublicKey: [0x05] + Array(repeating: 7, count: 32), identityPrivateKey: Array(repeating: 9, count: 32),
                preKeys: [1: [1, 1], 2: [2, 2]], nextPreKeyID: 3, signedPreKeys: [1: [0xAA]],
                sessions: [OMEMOAddress(jid: "bob@example.org", device: 42): [0, 1, 2, 255]],
                identities: [OMEMOAddress(jid: "bob@example.org", device: 42): [0x05] + Array(repeating: 4, count: 32)]
            )
        }

        static var changes: [OMEMOStateChange] {
            var keyChanges = OMEMOKeyChanges()
            keyChanges.preKeys = [1: Optional<[UInt8]>.none, 3: [3, 3]]
            keyChanges.nextPreKeyID = 4
            keyChanges.sessions = [OMEMOAddress(jid: "bob@example.org", device: 42): [9, 9, 9], OMEMOAddress(jid: "carol@example.org", device: 7): [7]]
            keyChanges.identities = [OMEMOAddress(jid: "carol@example.org", device: 7): [0x05] + Array(repeating: 8, count: 32)]
            return [
                .created(Self.keys(device: 1234)),
                .keys(keyChanges),
                .trust(jid: "bob@example.org", identityKey: [0x05] + Array(repeating: 4, count: 32), .verified),
                .trust(jid: "carol@example.org", identityKey: [0x05] + Array(repeating: 8, count: 32), .undecided),
                .deviceList(jid: "bob@example.org", devices: [42, 43]),
                .deviceList(jid: "me@example.org", devices: [1234]),
            ]
        }

        @Test("written by the journal, read back as the same state; a new device replaces the old one's rows; other accounts untouched", arguments: StateBackend.available)
        func roundTrip(_ backend: StateBackend) async throws {
            let store = try await StateFixture(backend).open()
            #expect(try store.omemoState(account: "home") == nil)
            try store.apply([.omemo(account: "home", Self.changes), .omemo(account: "work", [.created(Self.keys(device: 99))])], intakeThrough: nil)
            var expected = OMEMOAccountState(keys: Self.keys(device: 1234))
            expected.apply(Array(Self.changes.dropFirst()))
            #expect(try store.omemoState(account: "home") == expected)
            #expect(expected.keys.preKeys == [2: [2, 2], 3: [3, 3]] && expected.keys.nextPreKeyID == 4)
            #expect(try store.omemoAccounts() == ["home", "work"])

            // Deleting a session, then a new device.
            var removal = OMEMOKeyChanges()
            removal.sessions = [OMEMOAddress(jid: "carol@example.org", device: 7): Optional<[UInt8]>.none]
            try store.saveOMEMO([.keys(removal)], account: "home")
            #expect(try store.omemoState(account: "home")?.keys.sessions.count == 1)
            try store.apply([.omemo(account: "home", [.created(Self.keys(device: 5678))])], intakeThrough: nil)
            #expect(try store.omemoState(account: "home") == OMEMOAccountState(keys: Self.keys(device: 5678)))
            #expect(try store.omemoState(account: "work")?.keys.deviceID == 99)
        }

        @Test("the intake log's codec: every change decodes as written; any truncation or stray byte is refused, never a crash")
        func codec() throws {
            let bytes = OMEMOChangeColumn.encode(Self.changes)
            #expect(OMEMOChangeColumn.decode(bytes) == Self.changes)
            let entries = try Array(JournalEntryCodec.encode([.omemo(account: "home", Self.changes)])).withUnsafeBytes { try JournalEntryCodec.decode($0) }
            guard case .omemo(let account, let decoded) = entries.first else { Issue.record("not an omemo entry"); return }
            #expect(account == "home" && decoded == Self.changes)
            for length in 0..<bytes.count {
                #expect(OMEMOChangeColumn.decode(Array(bytes.prefix(length))) == nil)
            }
            #expect(OMEMOChangeColumn.decode(bytes + [0]) == nil)
            var badTag = bytes
            badTag[4] = 0xFF
            #expect(OMEMOChangeColumn.decode(badTag) == nil)
            #expect(OMEMOChangeColumn.decode([0xFF, 0xFF, 0xFF, 0x7F]) == nil, "a count past what is there")
        }
    }
}
