import CLibOMEMO
import OMEMOState

/// The Signal session with one remote device (XEP-0384 v0.3 §5 on the Signal protocol's
/// X3DH and double ratchet, both libomemo-c's): started from the device's bundle, then
/// sealing and opening the key material of each OMEMO message. Reads and writes go
/// through a ``SignalStore``, which records them for the commit.
///
/// This file owns the short-lived C objects of one operation: `session_builder`,
/// `session_pre_key_bundle`, `session_cipher`, `ciphertext_message`,
/// `pre_key_signal_message` and `signal_message`; each is freed before the call returns.
struct SignalSession {
    let store: SignalStore
    let address: OMEMOAddress

    init(store: SignalStore, address: OMEMOAddress) {
        self.store = store
        self.address = address
    }

    /// Whether a session with the device exists.
    var exists: Bool { self.store.keys.sessions[self.address] != nil }

    /// Starts the session from the device's bundle and one of its prekeys: the next
    /// ``seal(_:)`` is a prekey message. Throws on a bundle whose signed prekey's signature
    /// is not its identity's.
    func start(from bundle: OMEMOBundle, preKey: OMEMOBundle.PreKey) throws(OMEMOError) {
        let context = self.store.context.pointer
        let identity = try Self.point(bundle.identityKey, "the bundle's identity key", context)
        defer { signal_type_unref(identity) }
        let signed = try Self.point(bundle.signedPreKey, "the bundle's signed prekey", context)
        defer { signal_type_unref(signed) }
        let oneTime = try Self.point(preKey.key, "the bundle's prekey", context)
        defer { signal_type_unref(oneTime) }
        var made: OpaquePointer?
        let created = bundle.signedPreKeySignature.withUnsafeBufferPointer { signature in
            session_pre_key_bundle_create(
                &made, self.address.device, Int32(bitPattern: self.address.device), preKey.id, oneTime,
                bundle.signedPreKeyID, signed, signature.baseAddress, signature.count, identity
            )
        }
        guard created == 0, let made else { throw OMEMOError("read the bundle of \(self.address)", code: created) }
        defer { signal_type_unref(made) }
        let processed = self.withAddress { address -> Int32 in
            var builder: OpaquePointer?
            let created = session_builder_create(&builder, self.store.pointer, address, context)
            guard created == 0, let builder else { return created }
            defer { session_builder_free(builder) }
            return session_builder_process_pre_key_bundle(builder, made)
        }
        guard processed == 0 else {
            throw OMEMOError("start a session with \(self.address)", code: processed, reason: processed == SG_ERR_INVALID_KEY ? "the signed prekey's signature is not valid" : nil)
        }
    }

    /// Seals `keyMaterial` (an OMEMO payload's key and tag) for the device: the key a
    /// message carries for it, a prekey message while the device has not answered.
    func seal(_ keyMaterial: [UInt8]) throws(OMEMOError) -> OMEMOEncrypted.Key {
        let context = self.store.context.pointer
        var sealed: [UInt8] = []
        var type: Int32 = 0
        let result = self.withAddress { address -> Int32 in
            var cipher: OpaquePointer?
            let created = session_cipher_create(&cipher, self.store.pointer, address, context)
            guard created == 0, let cipher else { return created }
            defer { session_cipher_free(cipher) }
            var message: OpaquePointer?
            let encrypted = keyMaterial.withUnsafeBufferPointer { session_cipher_encrypt(cipher, $0.baseAddress, $0.count, &message) }
            guard encrypted == 0, let message else { return encrypted }
            defer { signal_type_unref(message) }
            type = ciphertext_message_get_type(message)
            guard let buffer = ciphertext_message_get_serialized(message) else { return SG_ERR_UNKNOWN }
            sealed = Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
            return 0
        }
        guard result == 0 else { throw OMEMOError("encrypt for \(self.address)", code: result) }
        return OMEMOEncrypted.Key(device: self.address.device, startsSession: type == CIPHERTEXT_PREKEY_TYPE, data: sealed)
    }

    /// Opens the key material `key` carries from the device: a prekey message starts (or
    /// restarts) the session and consumes our one-time prekey.
    func open(_ key: OMEMOEncrypted.Key) throws(OMEMOError) -> [UInt8] {
        let context = self.store.context.pointer
        var opened: [UInt8] = []
        let result = self.withAddress { address -> Int32 in
            var cipher: OpaquePointer?
            let created = session_cipher_create(&cipher, self.store.pointer, address, context)
            guard created == 0, let cipher else { return created }
            defer { session_cipher_free(cipher) }
            var plaintext: OpaquePointer?
            let decrypted: Int32 = key.data.withUnsafeBufferPointer { data in
                var message: OpaquePointer?
                if key.startsSession {
                    let read = pre_key_signal_message_deserialize(&message, data.baseAddress, data.count, context)
                    guard read == 0, let message else { return read }
                    defer { signal_type_unref(message) }
                    return session_cipher_decrypt_pre_key_signal_message(cipher, message, nil, &plaintext)
                }
                let read = signal_message_deserialize(&message, data.baseAddress, data.count, context)
                guard read == 0, let message else { return read }
                defer { signal_type_unref(message) }
                return session_cipher_decrypt_signal_message(cipher, message, nil, &plaintext)
            }
            guard decrypted == 0, let plaintext else { return decrypted == 0 ? SG_ERR_UNKNOWN : decrypted }
            defer { signal_buffer_bzero_free(plaintext) }
            opened = Array(UnsafeBufferPointer(start: signal_buffer_data(plaintext), count: signal_buffer_len(plaintext)))
            return 0
        }
        guard result == 0 else { throw OMEMOError("decrypt from \(self.address)", code: result, reason: Self.reason(result)) }
        return opened
    }

    /// Why opening failed, in words, for the codes a peer's message causes.
    static func reason(_ code: Int32) -> String? {
        switch code {
        case SG_ERR_NO_SESSION: "no session with this device"
        case SG_ERR_DUPLICATE_MESSAGE: "a message already decrypted"
        case SG_ERR_INVALID_KEY_ID: "the prekey it names is not ours (used or never published)"
        case SG_ERR_INVALID_MESSAGE, SG_ERR_INVALID_PROTO_BUF, SG_ERR_LEGACY_MESSAGE: "not a valid message"
        case SG_ERR_INVALID_MAC: "its MAC does not verify (a broken session)"
        default: nil
        }
    }

    private func withAddress<Result>(_ body: (UnsafePointer<signal_protocol_address>) -> Result) -> Result {
        var name = Array(self.address.jid.utf8CString)
        return name.withUnsafeMutableBufferPointer { name in
            var address = signal_protocol_address(name: name.baseAddress, name_len: name.count - 1, device_id: Int32(bitPattern: self.address.device))
            return withUnsafePointer(to: &address) { body($0) }
        }
    }

    private static func point(_ key: [UInt8], _ what: String, _ context: OpaquePointer) throws(OMEMOError) -> OpaquePointer {
        var point: OpaquePointer?
        let decoded = key.withUnsafeBufferPointer { curve_decode_point(&point, $0.baseAddress, $0.count, context) }
        guard decoded == 0, let point else { throw OMEMOError("read \(what)", code: decoded) }
        return point
    }
}

extension OMEMOError {
    /// libomemo-c refused a message it had decrypted already.
    var isDuplicateMessage: Bool { self.code == SG_ERR_DUPLICATE_MESSAGE }
}
