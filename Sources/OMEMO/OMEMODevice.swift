import Foundation
import OMEMOState

/// An account's OMEMO device (XEP-0384 v0.3): its keys, the bundle it publishes, and the
/// sessions through which it encrypts to other devices and decrypts what they send. No
/// I/O: fetching bundles and device lists, publishing, and committing ``takeChanges()``
/// before a message goes on are the owner's. One isolation domain uses it at a time.
public final class OMEMODevice {
    /// How many one-time prekeys the bundle offers (XEP-0384 v0.3 §4.3 asks for at least 20;
    /// clients publish 100).
    public static let preKeyCount = 100
    /// Device ids are 1 … 2³¹ − 1 (libomemo-c's are signed 32-bit).
    static let deviceIDs: ClosedRange<UInt32> = 1...UInt32(Int32.max)
    /// Prekey ids stay within 24 bits, as the Signal protocol's did.
    static let preKeyIDs: ClosedRange<UInt32> = 1...0xFF_FFFF

    private let context: SignalContext
    private let store: SignalStore
    private let identity: IdentityKeyPair
    /// The payloads' cipher.
    private let aes: AESGCM
    /// The account's bare JID: sessions with its other devices are under it.
    public let jid: String

    /// The keys as they are now, committed or not.
    public var keys: OMEMOKeys { self.store.keys }
    public var deviceID: UInt32 { self.store.keys.deviceID }

    /// The device `keys` describe, as it was (after a restart: the same device).
    public init(jid: String, keys: OMEMOKeys) throws(OMEMOError) {
        self.jid = jid
        self.context = try SignalContext()
        self.identity = try IdentityKeyPair(publicKey: keys.identityPublicKey, privateKey: keys.identityPrivateKey, in: self.context)
        self.store = try SignalStore(keys: keys, context: self.context)
        self.aes = try AESGCM()
    }

    /// A new device: a fresh identity, a device id not among `taken` (the account's device
    /// list), ``preKeyCount`` prekeys and a signed prekey made at `now`.
    public static func create(jid: String, taken: Set<UInt32> = [], now: Date) throws(OMEMOError) -> OMEMODevice {
        let context = try SignalContext()
        let identity = try IdentityKeyPair.generate(in: context)
        var deviceID: UInt32
        repeat {
            deviceID = try OMEMORandom.id(in: Self.deviceIDs)
        } while taken.contains(deviceID)
        let keys = OMEMOKeys(deviceID: deviceID, identityPublicKey: try identity.publicKey, identityPrivateKey: try identity.privateKey)
        let device = try OMEMODevice(jid: jid, keys: keys)
        _ = try device.refillPreKeys()
        _ = try device.rotateSignedPreKey(now: now, every: .zero)
        return device
    }

    /// The fingerprint contacts compare with this device's.
    public var fingerprint: OMEMOFingerprint {
        get throws(OMEMOError) { try self.identity.fingerprint }
    }

    /// The changes to commit since the last call.
    public func takeChanges() -> OMEMOKeyChanges { self.store.takeChanges() }

    /// `changes` taken but not committed (the commit failed) go with the next commit, under
    /// what changed since.
    public func putBack(_ changes: OMEMOKeyChanges) { self.store.putBack(changes) }

    // MARK: - The bundle and its prekeys

    /// The bundle to publish: the newest signed prekey and every one-time prekey.
    public var bundle: OMEMOBundle {
        get throws(OMEMOError) {
            guard let (id, record) = self.store.keys.signedPreKeys.max(by: { $0.key < $1.key }) else {
                throw OMEMOError("make the bundle", reason: "no signed prekey")
            }
            let signed = try PreKeyRecords.signedPublic(record, in: self.context)
            var preKeys: [OMEMOBundle.PreKey] = []
            for (id, record) in self.store.keys.preKeys.sorted(by: { $0.key < $1.key }) {
                preKeys.append(OMEMOBundle.PreKey(id: id, key: try PreKeyRecords.publicKey(ofPreKey: record, in: self.context)))
            }
            return OMEMOBundle(
                identityKey: self.store.keys.identityPublicKey, signedPreKeyID: id, signedPreKey: signed.key,
                signedPreKeySignature: signed.signature, preKeys: preKeys
            )
        }
    }

    /// Makes prekeys until there are ``preKeyCount`` again; true when the bundle changed.
    public func refillPreKeys() throws(OMEMOError) -> Bool {
        let missing = Self.preKeyCount - self.store.keys.preKeys.count
        guard missing > 0 else { return false }
        var next = self.store.keys.nextPreKeyID
        // Past the last id, start over at 1: by then every low id is long consumed.
        if next > Self.preKeyIDs.upperBound - UInt32(missing) { next = Self.preKeyIDs.lowerBound }
        let made = try PreKeyRecords.generate(count: missing, startingAt: next, in: self.context)
        for (id, record) in made { self.store.storePreKey(record, id: id) }
        self.store.advanceNextPreKeyID(to: next + UInt32(missing))
        return true
    }

    /// Makes a new signed prekey when the newest is `every` old at `now` (XEP-0384 v0.3
    /// §4.3: "regularly"); the previous one stays, for sessions a contact started from the
    /// bundle it fetched before, and older ones go. True when the bundle changed.
    public func rotateSignedPreKey(now: Date, every interval: Duration) throws(OMEMOError) -> Bool {
        let newest = self.store.keys.signedPreKeys.max { $0.key < $1.key }
        if let (_, record) = newest {
            let made = try PreKeyRecords.signedPublic(record, in: self.context).timestamp
            let age = now.timeIntervalSince1970 * 1000 - Double(made)
            guard age >= Double(interval.components.seconds) * 1000 else { return false }
        }
        let id = newest.map { $0.key >= Self.preKeyIDs.upperBound ? 1 : $0.key + 1 } ?? 1
        let timestamp = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let record = try PreKeyRecords.generateSigned(id: id, identity: self.identity, timestamp: timestamp, in: self.context)
        let previous = newest?.key
        for old in self.store.keys.signedPreKeys.keys where old != previous { self.store.removeSignedPreKey(old) }
        self.store.storeSignedPreKey(record, id: id)
        return true
    }

    // MARK: - Sessions

    /// Whether a session with `address` exists.
    public func hasSession(with address: OMEMOAddress) -> Bool {
        SignalSession(store: self.store, address: address).exists
    }

    /// The identity key `address` presented, once a session with it exists.
    public func identityKey(of address: OMEMOAddress) -> [UInt8]? {
        self.store.keys.identities[address]
    }

    /// Whether `bundle`'s signed prekey is signed by its identity key (XEP-0384 v0.3 §4.3).
    public func verifies(_ bundle: OMEMOBundle) -> Bool {
        IdentityKeyPair.verify(bundle.signedPreKeySignature, of: bundle.signedPreKey, by: bundle.identityKey, in: self.context)
    }

    /// Remembers the identity key `address`'s bundle shows, before any session (the
    /// fingerprint listing shows it, and a decision by hand can name it).
    public func noteIdentity(_ key: [UInt8], of address: OMEMOAddress) {
        self.store.saveIdentity(key, for: address)
    }

    /// Starts a session with `address` from its bundle, on one of its prekeys at random.
    /// Throws when the signed prekey's signature is not the identity's.
    public func startSession(with address: OMEMOAddress, bundle: OMEMOBundle) throws(OMEMOError) {
        guard !bundle.preKeys.isEmpty else { throw OMEMOError("start a session with \(address)", reason: "the bundle has no prekey") }
        let pick = Int(try OMEMORandom.id(in: 0...UInt32(bundle.preKeys.count - 1)))
        try SignalSession(store: self.store, address: address).start(from: bundle, preKey: bundle.preKeys[pick])
    }

    /// `plaintext` sealed for every device in `recipients`, each of which must have a
    /// session; nil: a key transport (no payload), which moves the sessions on.
    public func encrypt(_ plaintext: [UInt8]?, for recipients: [OMEMOAddress]) throws(OMEMOError) -> OMEMOEncrypted {
        let keyMaterial: [UInt8]
        let iv: [UInt8]
        var payload: [UInt8]?
        if let plaintext {
            let sealed = try OMEMOPayload.seal(plaintext, with: self.aes)
            (keyMaterial, iv, payload) = (sealed.keyMaterial, sealed.iv, sealed.ciphertext)
        } else {
            keyMaterial = try OMEMORandom.bytes(32)
            iv = try OMEMORandom.bytes(12)
        }
        var keys: [OMEMOEncrypted.Key] = []
        for address in recipients {
            let session = SignalSession(store: self.store, address: address)
            guard session.exists else { throw OMEMOError("encrypt for \(address)", reason: "no session") }
            keys.append(try session.seal(keyMaterial))
        }
        return OMEMOEncrypted(senderDevice: self.deviceID, keys: keys, iv: iv, payload: payload)
    }

    /// Opens `encrypted`, sent by `jid`'s device.
    public func decrypt(_ encrypted: OMEMOEncrypted, from jid: String) throws(OMEMODecryptionError) -> OMEMODecrypted {
        let sender = OMEMOAddress(jid: jid, device: encrypted.senderDevice)
        guard let key = encrypted.key(for: self.deviceID) else { throw .notForThisDevice(sender: sender) }
        let keyMaterial: [UInt8]
        do {
            keyMaterial = try SignalSession(store: self.store, address: sender).open(key)
        } catch {
            // A duplicate is a repeat of what was read: nothing to mend.
            if error.isDuplicateMessage { throw .alreadyRead(sender: sender) }
            throw .session(sender: sender, reason: error.reason ?? error.description, repairable: true)
        }
        var plaintext: [UInt8]?
        if let payload = encrypted.payload {
            do {
                plaintext = try OMEMOPayload.open(payload, keyMaterial: keyMaterial, iv: encrypted.iv, with: self.aes)
            } catch {
                throw .payload(sender: sender, reason: error.reason ?? error.description)
            }
        }
        return OMEMODecrypted(sender: sender, plaintext: plaintext, startedSession: key.startsSession, identityKey: self.store.keys.identities[sender])
    }
}
