import XMPP

/// An OMEMO 0.3 payload (XEP-0384 v0.3 §5): the message body sealed with AES-128-GCM under a
/// fresh 16-byte key and 12-byte IV. The key material each recipient device's session seals
/// is the key followed by the 16-byte tag (32 bytes); the `<payload/>` is the ciphertext
/// alone. Early clients sealed the key alone and put the tag after the ciphertext: read too.
public struct OMEMOPayload: Hashable, Sendable {
    /// Key ‖ tag, for each device's session to seal.
    public var keyMaterial: [UInt8]
    public var iv: [UInt8]
    public var ciphertext: [UInt8]

    /// Seals `plaintext` under a fresh key and IV from OpenSSL's random source.
    static func seal(_ plaintext: [UInt8], with aes: AESGCM) throws(OMEMOError) -> OMEMOPayload {
        // Key and IV from one draw: each call into OpenSSL's random source takes its lock.
        let fresh = try OMEMORandom.bytes(28)
        let key = Array(fresh[..<16])
        let iv = Array(fresh[16...])
        let (ciphertext, tag) = try aes.seal(plaintext, key: key, iv: iv)
        return OMEMOPayload(keyMaterial: key + tag, iv: iv, ciphertext: ciphertext)
    }

    /// The plaintext, given the key material a session opened: 32 bytes (key ‖ tag), or
    /// 16 (the key; the tag ends the ciphertext). Throws when it does not authenticate.
    static func open(_ ciphertext: [UInt8], keyMaterial: [UInt8], iv: [UInt8], with aes: AESGCM) throws(OMEMOError) -> [UInt8] {
        switch keyMaterial.count {
        case 32:
            return try aes.open(ciphertext, tag: Array(keyMaterial[16...]), key: Array(keyMaterial[..<16]), iv: iv)
        case 16 where ciphertext.count >= AESGCM.tagSize:
            let body = Array(ciphertext.dropLast(AESGCM.tagSize))
            return try aes.open(body, tag: Array(ciphertext.suffix(AESGCM.tagSize)), key: keyMaterial, iv: iv)
        default:
            throw OMEMOError("open an OMEMO payload", reason: "key material of \(keyMaterial.count) bytes for a payload of \(ciphertext.count)")
        }
    }
}
