import Foundation
import OMEMOState
import Testing

@testable import OMEMO

/// Two OMEMO devices talking through libomemo-c and our stores, no sockets: a session
/// started from a bundle, prekey then normal messages both ways, a key transport, a
/// restart from committed keys, and what each failure reports.
@Suite("OMEMO device")
struct OMEMODeviceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A device with its keys committed, the way the daemon keeps them.
    struct Committed {
        var device: OMEMODevice
        var keys: OMEMOKeys

        init(_ jid: String, taken: Set<UInt32> = []) throws {
            self.device = try OMEMODevice.create(jid: jid, taken: taken, now: OMEMODeviceTests.now)
            self.keys = self.device.keys
            _ = self.device.takeChanges()
        }

        var address: OMEMOAddress { OMEMOAddress(jid: self.device.jid, device: self.device.deviceID) }

        /// Commits what changed: applied to the kept keys, which must then equal the live ones.
        mutating func commit() -> OMEMOKeyChanges {
            let changes = self.device.takeChanges()
            self.keys.apply(changes)
            return changes
        }

        /// kill -9 and a restart: the device as the committed keys describe it.
        mutating func restart() throws {
            self.device = try OMEMODevice(jid: self.device.jid, keys: self.keys)
        }
    }

    @Test("a new device: an id in range, 100 prekeys with ids from 1, a signed prekey whose signature its identity verifies")
    func newDevice() throws {
        let alice = try Committed("alice@example.org", taken: [1, 2, 3])
        let bundle = try alice.device.bundle
        #expect(OMEMODevice.deviceIDs.contains(alice.device.deviceID))
        #expect(![1, 2, 3].contains(alice.device.deviceID))
        #expect(bundle.preKeys.count == 100)
        #expect(bundle.preKeys.map(\.id) == Array(1...100))
        #expect(alice.keys.nextPreKeyID == 101)
        #expect(bundle.identityKey == alice.keys.identityPublicKey)
        #expect(IdentityKeyPair.verify(bundle.signedPreKeySignature, of: bundle.signedPreKey, by: bundle.identityKey, in: try SignalContext()))
        // The bundle survives its XML: what a contact reads is what we made.
        #expect(try OMEMOBundle(element: bundle.element, preKeyLimit: 200) == bundle)
        #expect(try alice.device.fingerprint == OMEMOFingerprint(publicKey: bundle.identityKey))
    }

    @Test("a conversation: a prekey message, answers both ways as normal messages, the used prekey gone and refilled under a new id, keys committed after each step")
    func conversation() throws {
        var alice = try Committed("alice@example.org")
        var bob = try Committed("bob@example.org")
        try alice.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        let first = try alice.device.encrypt(Array("hello bob".utf8), for: [bob.address])
        #expect(first.keys.count == 1 && first.keys[0].startsSession && first.keys[0].device == bob.device.deviceID)
        #expect(alice.commit().sessions[bob.address] != nil)

        // Through XML, as it travels.
        let wire = try OMEMOEncrypted(element: first.element)
        let opened = try bob.device.decrypt(wire, from: "alice@example.org")
        #expect(opened.plaintext == Array("hello bob".utf8))
        #expect(opened.startedSession)
        #expect(opened.sender == alice.address)
        #expect(opened.identityKey == alice.keys.identityPublicKey)
        let consumed = Set(bob.keys.preKeys.keys).subtracting(bob.device.keys.preKeys.keys)
        #expect(consumed.count == 1)
        #expect(try bob.device.refillPreKeys())
        #expect(bob.device.keys.preKeys.count == 100)
        #expect(bob.device.keys.preKeys[101] != nil && bob.device.keys.nextPreKeyID == 102)
        let changes = bob.commit()
        #expect(changes.preKeys[consumed.first!] == .some(nil))
        #expect(changes.identities[alice.address] == alice.keys.identityPublicKey)
        #expect(bob.keys == bob.device.keys)

        // Bob answers on the session Alice started: a normal message.
        let answer = try bob.device.encrypt(Array("hi alice".utf8), for: [alice.address])
        #expect(!answer.keys[0].startsSession)
        _ = bob.commit()
        #expect(try alice.device.decrypt(answer, from: "bob@example.org").plaintext == Array("hi alice".utf8))
        _ = alice.commit()
        // And Alice's next is normal too, now that Bob answered.
        for index in 0..<5 {
            let next = try alice.device.encrypt(Array("message \(index)".utf8), for: [bob.address])
            #expect(!next.keys[0].startsSession)
            _ = alice.commit()
            #expect(try bob.device.decrypt(next, from: "alice@example.org").plaintext == Array("message \(index)".utf8))
            _ = bob.commit()
        }
        #expect(alice.keys == alice.device.keys && bob.keys == bob.device.keys)
    }

    @Test("a restart from the committed keys: the same device id, the sessions go on, no new key exchange; a message key is never used twice")
    func restart() throws {
        var alice = try Committed("alice@example.org")
        var bob = try Committed("bob@example.org")
        try alice.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        let first = try alice.device.encrypt(Array("one".utf8), for: [bob.address])
        _ = alice.commit()
        _ = try bob.device.decrypt(first, from: "alice@example.org")
        _ = bob.commit()
        let reply = try bob.device.encrypt(Array("two".utf8), for: [alice.address])
        _ = bob.commit()
        _ = try alice.device.decrypt(reply, from: "bob@example.org")
        _ = alice.commit()

        let id = alice.device.deviceID
        try alice.restart()
        try bob.restart()
        #expect(alice.device.deviceID == id)
        let after = try alice.device.encrypt(Array("three".utf8), for: [bob.address])
        #expect(!after.keys[0].startsSession)
        _ = alice.commit()
        #expect(try bob.device.decrypt(after, from: "alice@example.org").plaintext == Array("three".utf8))
        _ = bob.commit()

        // Encrypted but never committed (kill -9 before the commit): the next message after
        // the restart uses the same chain step, but with the commit before the write the
        // first was never sent, so Bob reads the second.
        _ = try alice.device.encrypt(Array("lost before the write".utf8), for: [bob.address])
        try alice.restart()
        let again = try alice.device.encrypt(Array("four".utf8), for: [bob.address])
        _ = alice.commit()
        #expect(try bob.device.decrypt(again, from: "alice@example.org").plaintext == Array("four".utf8))
        // What was committed is what was used: the same message again is a duplicate.
        #expect(throws: OMEMODecryptionError.alreadyRead(sender: alice.address)) { try bob.device.decrypt(again, from: "alice@example.org") }
        #expect(!OMEMODecryptionError.alreadyRead(sender: alice.address).wantsRepair)
    }

    @Test("a key transport (no payload) moves the session on and opens to no text; our own other device gets the same message")
    func keyTransportAndOwnDevices() throws {
        var alice = try Committed("alice@example.org")
        var phone = try Committed("alice@example.org", taken: [alice.device.deviceID])
        var bob = try Committed("bob@example.org")
        try alice.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        try alice.device.startSession(with: phone.address, bundle: try phone.device.bundle)
        let message = try alice.device.encrypt(Array("to both".utf8), for: [bob.address, phone.address])
        #expect(Set(message.keys.map(\.device)) == [bob.device.deviceID, phone.device.deviceID])
        #expect(try bob.device.decrypt(message, from: "alice@example.org").plaintext == Array("to both".utf8))
        #expect(try phone.device.decrypt(message, from: "alice@example.org").plaintext == Array("to both".utf8))

        let transport = try bob.device.encrypt(nil, for: [alice.address])
        #expect(transport.payload == nil)
        let opened = try alice.device.decrypt(try OMEMOEncrypted(element: transport.element), from: "bob@example.org")
        #expect(opened.plaintext == nil)
        _ = (alice.commit(), phone.commit(), bob.commit())
    }

    @Test("what cannot be read says why: no key for this device, no session, a tampered key, a tampered payload, a bundle whose signature is not its identity's")
    func failures() throws {
        let alice = try Committed("alice@example.org")
        let bob = try Committed("bob@example.org")
        let carol = try Committed("carol@example.org")
        try alice.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        _ = try bob.device.decrypt(try alice.device.encrypt(Array("hello".utf8), for: [bob.address]), from: "alice@example.org")
        _ = try alice.device.decrypt(try bob.device.encrypt(Array("hi".utf8), for: [alice.address]), from: "bob@example.org")
        let message = try alice.device.encrypt(Array("for bob".utf8), for: [bob.address])
        #expect(!message.keys[0].startsSession)

        #expect(throws: OMEMODecryptionError.notForThisDevice(sender: alice.address)) { try carol.device.decrypt(message, from: "alice@example.org") }

        // The last 8 bytes of a Signal message are its MAC.
        var tamperedKey = message
        tamperedKey.keys[0].data[tamperedKey.keys[0].data.count - 1] ^= 0x01
        let keyError = #expect(throws: OMEMODecryptionError.self) { try bob.device.decrypt(tamperedKey, from: "alice@example.org") }
        #expect(keyError?.wantsRepair == true)

        var tamperedPayload = message
        tamperedPayload.payload![0] ^= 0x01
        let payloadError = #expect(throws: OMEMODecryptionError.self) { try bob.device.decrypt(tamperedPayload, from: "alice@example.org") }
        guard case .payload = payloadError else { Issue.record("expected a payload error, got \(String(describing: payloadError))"); return }

        // A normal message on no session.
        try carol.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        _ = try carol.device.encrypt(Array("first".utf8), for: [bob.address])
        var noSession = try carol.device.encrypt(Array("second".utf8), for: [bob.address])
        noSession.keys[0].startsSession = false
        let sessionError = #expect(throws: OMEMODecryptionError.self) { try bob.device.decrypt(noSession, from: "carol@example.org") }
        #expect(sessionError?.wantsRepair == true)

        var forged = try bob.device.bundle
        forged.signedPreKeySignature[0] ^= 0x01
        let dave = OMEMOAddress(jid: "dave@example.org", device: 7)
        #expect(throws: OMEMOError.self) { try alice.device.startSession(with: dave, bundle: forged) }
        #expect(!alice.device.hasSession(with: dave))
    }

    @Test("the signed prekey turns over on its schedule, keeping the previous one for sessions started from an older bundle")
    func rotation() throws {
        var bob = try Committed("bob@example.org")
        let week = Duration.seconds(7 * 86400)
        #expect(try !bob.device.rotateSignedPreKey(now: Self.now.addingTimeInterval(6 * 86400), every: week))
        let old = try bob.device.bundle
        #expect(try bob.device.rotateSignedPreKey(now: Self.now.addingTimeInterval(7 * 86400), every: week))
        let new = try bob.device.bundle
        #expect(new.signedPreKeyID == old.signedPreKeyID + 1)
        #expect(Set(bob.device.keys.signedPreKeys.keys) == [old.signedPreKeyID, new.signedPreKeyID])
        _ = bob.commit()

        // Alice fetched the old bundle: her session still starts.
        var alice = try Committed("alice@example.org")
        try alice.device.startSession(with: bob.address, bundle: old)
        let message = try alice.device.encrypt(Array("on the old signed prekey".utf8), for: [bob.address])
        _ = alice.commit()
        #expect(try bob.device.decrypt(message, from: "alice@example.org").plaintext == Array("on the old signed prekey".utf8))

        #expect(try bob.device.rotateSignedPreKey(now: Self.now.addingTimeInterval(14 * 86400), every: week))
        #expect(Set(bob.device.keys.signedPreKeys.keys) == [new.signedPreKeyID, new.signedPreKeyID + 1])
    }

    @Test("changes whose commit failed go with the next commit as the records are then, never over a newer record a later commit wrote")
    func putBack() throws {
        var alice = try Committed("alice@example.org")
        let bob = try Committed("bob@example.org")
        try alice.device.startSession(with: bob.address, bundle: try bob.device.bundle)
        _ = try alice.device.encrypt(Array("one".utf8), for: [bob.address])
        let failed = alice.device.takeChanges()
        _ = try alice.device.encrypt(Array("two".utf8), for: [bob.address])
        let later = alice.commit()
        #expect(later.sessions[bob.address] != failed.sessions[bob.address])
        alice.device.putBack(failed)
        let retried = alice.device.takeChanges()
        #expect(retried.sessions[bob.address] == .some(alice.device.keys.sessions[bob.address]), "the current record, not the failed one's")
        #expect(retried.nextPreKeyID == nil || retried.nextPreKeyID == alice.device.keys.nextPreKeyID)
        alice.keys.apply(retried)
        #expect(alice.keys == alice.device.keys)
    }
}
