import CLibOMEMO

/// Making and reading a device's prekeys (XEP-0384 v0.3 §4.3): one-time prekeys, each
/// taken by the one session it starts, and the signed prekey, signed by the identity and
/// replaced now and then. Records are libomemo-c's serialization, as ``OMEMOKeys`` keeps
/// them; the bundle publishes their public halves.
///
/// This file owns `session_pre_key`, `session_signed_pre_key` and libomemo-c's list of
/// generated prekeys, each freed before the call returns.
enum PreKeyRecords {
    /// `count` new one-time prekeys with ids from `start` on.
    static func generate(count: Int, startingAt start: UInt32, in context: SignalContext) throws(OMEMOError) -> [UInt32: [UInt8]] {
        guard count > 0 else { return [:] }
        var head: OpaquePointer?
        let made = signal_protocol_key_helper_generate_pre_keys(&head, UInt32(start), UInt32(count), context.pointer)
        guard made == 0, let head else { throw OMEMOError("generate \(count) prekeys", code: made) }
        defer { signal_protocol_key_helper_key_list_free(head) }
        var records: [UInt32: [UInt8]] = [:]
        var node: OpaquePointer? = head
        while let current = node {
            let preKey = signal_protocol_key_helper_key_list_element(current)
            var buffer: OpaquePointer?
            let serialized = session_pre_key_serialize(&buffer, preKey)
            guard serialized == 0, let buffer else { throw OMEMOError("serialize a prekey", code: serialized) }
            records[session_pre_key_get_id(preKey)] = Self.bytes(buffer)
            signal_buffer_bzero_free(buffer)
            node = signal_protocol_key_helper_key_list_next(current)
        }
        return records
    }

    /// A one-time prekey record's public key, for the bundle.
    static func publicKey(ofPreKey record: [UInt8], in context: SignalContext) throws(OMEMOError) -> [UInt8] {
        var preKey: OpaquePointer?
        let read = record.withUnsafeBufferPointer { session_pre_key_deserialize(&preKey, $0.baseAddress, $0.count, context.pointer) }
        guard read == 0, let preKey else { throw OMEMOError("read a stored prekey", code: read) }
        defer { signal_type_unref(preKey) }
        return try Self.serialize(ec_key_pair_get_public(session_pre_key_get_key_pair(preKey)))
    }

    /// A new signed prekey `id`, signed by `identity`, made at `timestamp` (milliseconds
    /// since 1970, kept in the record: the rotation reads it back).
    static func generateSigned(id: UInt32, identity: IdentityKeyPair, timestamp: UInt64, in context: SignalContext) throws(OMEMOError) -> [UInt8] {
        var signed: OpaquePointer?
        let made = signal_protocol_key_helper_generate_signed_pre_key(&signed, identity.pointer, id, timestamp, context.pointer)
        guard made == 0, let signed else { throw OMEMOError("generate a signed prekey", code: made) }
        defer { signal_type_unref(signed) }
        var buffer: OpaquePointer?
        let serialized = session_signed_pre_key_serialize(&buffer, signed)
        guard serialized == 0, let buffer else { throw OMEMOError("serialize the signed prekey", code: serialized) }
        defer { signal_buffer_bzero_free(buffer) }
        return Self.bytes(buffer)
    }

    /// What a bundle shows of a signed prekey record, and when it was made.
    struct SignedPublic {
        var key: [UInt8]
        var signature: [UInt8]
        /// Milliseconds since 1970.
        var timestamp: UInt64
    }

    static func signedPublic(_ record: [UInt8], in context: SignalContext) throws(OMEMOError) -> SignedPublic {
        var signed: OpaquePointer?
        let read = record.withUnsafeBufferPointer { session_signed_pre_key_deserialize(&signed, $0.baseAddress, $0.count, context.pointer) }
        guard read == 0, let signed else { throw OMEMOError("read the stored signed prekey", code: read) }
        defer { signal_type_unref(signed) }
        let key = try Self.serialize(ec_key_pair_get_public(session_signed_pre_key_get_key_pair(signed)))
        let length = session_signed_pre_key_get_signature_len(signed)
        let signature = Array(UnsafeBufferPointer(start: session_signed_pre_key_get_signature(signed), count: length))
        return SignedPublic(key: key, signature: signature, timestamp: session_signed_pre_key_get_timestamp(signed))
    }

    private static func serialize(_ key: OpaquePointer?) throws(OMEMOError) -> [UInt8] {
        var buffer: OpaquePointer?
        let serialized = ec_public_key_serialize(&buffer, key)
        guard serialized == 0, let buffer else { throw OMEMOError("serialize a public key", code: serialized) }
        defer { signal_buffer_free(buffer) }
        return Self.bytes(buffer)
    }

    private static func bytes(_ buffer: OpaquePointer) -> [UInt8] {
        Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
    }
}
