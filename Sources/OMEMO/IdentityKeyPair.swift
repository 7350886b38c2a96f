import CLibOMEMO

/// An OMEMO device's identity (XEP-0384 v0.3 §3): a Curve25519 key pair made once per
/// device and kept; its public half is what contacts verify (``OMEMOFingerprint``), and it
/// signs the device's signed prekey with XEdDSA. This file owns the
/// `ratchet_identity_key_pair`, and the `ec_public_key`s it decodes to verify.
final class IdentityKeyPair {
    /// For the other files of this module that take the pair (signing a prekey).
    let pointer: OpaquePointer
    private let context: SignalContext

    private init(pointer: OpaquePointer, context: SignalContext) {
        self.pointer = pointer
        self.context = context
    }

    deinit {
        signal_type_unref(self.pointer)
    }

    /// A new key pair from the context's random source.
    static func generate(in context: SignalContext) throws(OMEMOError) -> IdentityKeyPair {
        var pair: OpaquePointer?
        let made = signal_protocol_key_helper_generate_identity_key_pair(&pair, context.pointer)
        guard made == 0, let pair else { throw OMEMOError("generate an identity key pair", code: made) }
        return IdentityKeyPair(pointer: pair, context: context)
    }

    /// The pair kept in ``OMEMOKeys``: the serialized public key and the 32-byte private key.
    convenience init(publicKey: [UInt8], privateKey: [UInt8], in context: SignalContext) throws(OMEMOError) {
        var point: OpaquePointer?
        let decoded = publicKey.withUnsafeBufferPointer { curve_decode_point(&point, $0.baseAddress, $0.count, context.pointer) }
        guard decoded == 0, let point else { throw OMEMOError("read the identity's public key", code: decoded) }
        defer { signal_type_unref(point) }
        var secret: OpaquePointer?
        let read = privateKey.withUnsafeBufferPointer { curve_decode_private_point(&secret, $0.baseAddress, $0.count, context.pointer) }
        guard read == 0, let secret else { throw OMEMOError("read the identity's private key", code: read) }
        defer { signal_type_unref(secret) }
        var pair: OpaquePointer?
        let made = ratchet_identity_key_pair_create(&pair, point, secret)
        guard made == 0, let pair else { throw OMEMOError("make the identity key pair", code: made) }
        self.init(pointer: pair, context: context)
    }

    /// The private key (32 bytes), kept in the state; never logged.
    var privateKey: [UInt8] {
        get throws(OMEMOError) {
            var buffer: OpaquePointer?
            let serialized = ec_private_key_serialize(&buffer, ratchet_identity_key_pair_get_private(self.pointer))
            guard serialized == 0, let buffer else { throw OMEMOError("serialize the identity's private key", code: serialized) }
            defer { signal_buffer_bzero_free(buffer) }
            return Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
        }
    }

    /// The public key as the Signal protocol serializes it: 0x05, then the 32 bytes of the
    /// Curve25519 point (what a bundle's `identityKey` carries, base64).
    var publicKey: [UInt8] {
        get throws(OMEMOError) {
            var buffer: OpaquePointer?
            let serialized = ec_public_key_serialize(&buffer, ratchet_identity_key_pair_get_public(self.pointer))
            guard serialized == 0, let buffer else { throw OMEMOError("serialize the identity key", code: serialized) }
            defer { signal_buffer_free(buffer) }
            return Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
        }
    }

    /// The fingerprint clients show for this identity.
    var fingerprint: OMEMOFingerprint {
        get throws(OMEMOError) {
            guard let fingerprint = OMEMOFingerprint(publicKey: try self.publicKey) else {
                throw OMEMOError("take the fingerprint", reason: "the public key is not a serialized Curve25519 point")
            }
            return fingerprint
        }
    }

    /// An XEdDSA signature of `message` (64 bytes) by the private key.
    func sign(_ message: [UInt8]) throws(OMEMOError) -> [UInt8] {
        var buffer: OpaquePointer?
        let signed = message.withUnsafeBufferPointer {
            curve_calculate_signature(self.context.pointer, &buffer, ratchet_identity_key_pair_get_private(self.pointer), $0.baseAddress, $0.count)
        }
        guard signed == 0, let buffer else { throw OMEMOError("sign", code: signed) }
        defer { signal_buffer_free(buffer) }
        return Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
    }

    /// Whether `signature` is `publicKey`'s (serialized, 0x05 first) over `message`. A key
    /// or signature that is not well formed is not valid: false, never a throw.
    static func verify(_ signature: [UInt8], of message: [UInt8], by publicKey: [UInt8], in context: SignalContext) -> Bool {
        var key: OpaquePointer?
        let decoded = publicKey.withUnsafeBufferPointer { curve_decode_point(&key, $0.baseAddress, $0.count, context.pointer) }
        guard decoded == 0, let key else { return false }
        defer { signal_type_unref(key) }
        let valid = message.withUnsafeBufferPointer { message in
            signature.withUnsafeBufferPointer { signature in
                curve_verify_signature(key, message.baseAddress, message.count, signature.baseAddress, signature.count)
            }
        }
        return valid == 1
    }
}
