import CLibOMEMO
import OMEMOState

/// An OMEMO device's keys as libomemo-c reads and writes them (XEP-0384 v0.3 §5 on the
/// Signal protocol): the identity, prekey, signed prekey and session stores of a
/// `signal_protocol_store_context`, kept in ``OMEMOKeys`` in memory. Every write is also
/// recorded in ``changes`` (write-back): the owner takes them and commits them with the
/// message that made them, before that message is written or relayed.
///
/// This file owns the `signal_protocol_store_context`; its callbacks are in
/// `SignalStore+Callbacks.swift`. Trust is not libomemo-c's: it accepts every identity and
/// the device decides whom it encrypts to and whose messages it relays (``OMEMOTrust``).
/// One isolation domain uses a store at a time.
final class SignalStore {
    let context: SignalContext
    let pointer: OpaquePointer
    /// The keys as they are now, committed or not.
    private(set) var keys: OMEMOKeys
    /// What changed since the last ``takeChanges()``.
    private(set) var changes = OMEMOKeyChanges()

    init(keys: OMEMOKeys, context: SignalContext) throws(OMEMOError) {
        self.keys = keys
        self.context = context
        var store: OpaquePointer?
        let created = signal_protocol_store_context_create(&store, context.pointer)
        guard created == 0, let store else { throw OMEMOError("create the key store", code: created) }
        self.pointer = store
        let me = Unmanaged.passUnretained(self).toOpaque()
        var sessions = Self.sessionStore(me)
        var preKeys = Self.preKeyStore(me)
        var signedPreKeys = Self.signedPreKeyStore(me)
        var identities = Self.identityStore(me)
        let installed = [
            signal_protocol_store_context_set_session_store(store, &sessions),
            signal_protocol_store_context_set_pre_key_store(store, &preKeys),
            signal_protocol_store_context_set_signed_pre_key_store(store, &signedPreKeys),
            signal_protocol_store_context_set_identity_key_store(store, &identities),
        ]
        if let failed = installed.first(where: { $0 != 0 }) {
            throw OMEMOError("install the key stores", code: failed)
        }
    }

    deinit {
        signal_protocol_store_context_destroy(self.pointer)
    }

    /// The changes since the last call, which the caller now commits.
    func takeChanges() -> OMEMOKeyChanges {
        defer { self.changes = OMEMOKeyChanges() }
        return self.changes
    }

    /// Changes whose commit failed go with the next one, as the records are then: a later
    /// commit may have written newer ones, which must not be written over with these.
    func putBack(_ failed: OMEMOKeyChanges) {
        for id in failed.preKeys.keys where self.changes.preKeys[id] == nil { self.changes.preKeys[id] = .some(self.keys.preKeys[id]) }
        for id in failed.signedPreKeys.keys where self.changes.signedPreKeys[id] == nil {
            self.changes.signedPreKeys[id] = .some(self.keys.signedPreKeys[id])
        }
        for address in failed.sessions.keys where self.changes.sessions[address] == nil { self.changes.sessions[address] = .some(self.keys.sessions[address]) }
        for address in failed.identities.keys where self.changes.identities[address] == nil { self.changes.identities[address] = self.keys.identities[address] }
        if failed.nextPreKeyID != nil, self.changes.nextPreKeyID == nil { self.changes.nextPreKeyID = self.keys.nextPreKeyID }
    }

    // MARK: - Writes, each recorded

    func storeSession(_ record: [UInt8], for address: OMEMOAddress) {
        self.keys.sessions[address] = record
        self.changes.sessions[address] = .some(record)
    }

    func deleteSession(_ address: OMEMOAddress) -> Bool {
        guard self.keys.sessions.removeValue(forKey: address) != nil else { return false }
        self.changes.sessions[address] = .some(nil)
        return true
    }

    func storePreKey(_ record: [UInt8], id: UInt32) {
        self.keys.preKeys[id] = record
        self.changes.preKeys[id] = .some(record)
    }

    func advanceNextPreKeyID(to next: UInt32) {
        self.keys.nextPreKeyID = next
        self.changes.nextPreKeyID = next
    }

    func removePreKey(_ id: UInt32) {
        guard self.keys.preKeys.removeValue(forKey: id) != nil else { return }
        self.changes.preKeys[id] = .some(nil)
    }

    func storeSignedPreKey(_ record: [UInt8], id: UInt32) {
        self.keys.signedPreKeys[id] = record
        self.changes.signedPreKeys[id] = .some(record)
    }

    func removeSignedPreKey(_ id: UInt32) {
        guard self.keys.signedPreKeys.removeValue(forKey: id) != nil else { return }
        self.changes.signedPreKeys[id] = .some(nil)
    }

    func saveIdentity(_ key: [UInt8], for address: OMEMOAddress) {
        guard self.keys.identities[address] != key else { return }
        self.keys.identities[address] = key
        self.changes.identities[address] = key
    }
}
