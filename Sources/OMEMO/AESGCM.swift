import COpenSSL

/// AES-GCM (NIST SP 800-38D) on the system OpenSSL: OMEMO 0.3 seals each payload with
/// AES-128-GCM (XEP-0384 v0.3 §5), and a file shared encrypted is AES-256-GCM (XEP-0454).
/// The 16-byte tag is kept apart from the ciphertext: OMEMO 0.3 carries it with the message
/// key, XEP-0454 after the file. This file owns the two ciphers, fetched once per instance
/// (a device keeps one; OpenSSL 3 looks one named by `EVP_aes_128_gcm()` up again on every
/// use), and the `EVP_CIPHER_CTX` of each call. Immutable once made: usable from any thread.
final class AESGCM: Sendable {
    static let tagSize = 16
    /// `EVP_CIPHER`s AES-128-GCM and AES-256-GCM.
    private nonisolated(unsafe) let aes128: OpaquePointer
    private nonisolated(unsafe) let aes256: OpaquePointer

    init() throws(OMEMOError) {
        guard let aes128 = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) else { throw OMEMOError("set up AES-GCM", reason: "OpenSSL has no AES-128-GCM") }
        guard let aes256 = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            EVP_CIPHER_free(aes128)
            throw OMEMOError("set up AES-GCM", reason: "OpenSSL has no AES-256-GCM")
        }
        self.aes128 = aes128
        self.aes256 = aes256
    }

    deinit {
        EVP_CIPHER_free(self.aes128)
        EVP_CIPHER_free(self.aes256)
    }

    /// Seals `plaintext` under `key` (16 or 32 bytes) and `iv` (12 bytes, or the 16 early
    /// OMEMO clients used): the ciphertext, as long as the plaintext, and the tag.
    func seal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) throws(OMEMOError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var tag = [UInt8](repeating: 0, count: Self.tagSize)
        let ciphertext = try self.run(plaintext, key: key, iv: iv, encrypt: true, afterFinal: { context throws(OMEMOError) in
            let taken = tag.withUnsafeMutableBytes { EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagSize), $0.baseAddress) }
            guard taken == 1 else { throw OMEMOError("take the AES-GCM tag", reason: "OpenSSL refused") }
        })
        return (ciphertext, tag)
    }

    /// Opens `ciphertext` sealed under `key` and `iv`; throws when `tag` does not match
    /// (a forged or damaged message, or the wrong key).
    func open(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], iv: [UInt8]) throws(OMEMOError) -> [UInt8] {
        guard tag.count == Self.tagSize else { throw OMEMOError("open an AES-GCM message", reason: "a tag of \(tag.count) bytes") }
        return try self.run(ciphertext, key: key, iv: iv, encrypt: false, beforeFinal: { context throws(OMEMOError) in
            var expected = tag
            let set = expected.withUnsafeMutableBytes { EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagSize), $0.baseAddress) }
            guard set == 1 else { throw OMEMOError("open an AES-GCM message", reason: "OpenSSL refused the tag") }
        })
    }

    /// One pass of AES-GCM. For sealing, `afterFinal` takes the tag; for opening,
    /// `beforeFinal` sets it and the final step checks it.
    private func run(
        _ input: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Bool,
        beforeFinal: (OpaquePointer) throws(OMEMOError) -> Void = { _ in }, afterFinal: (OpaquePointer) throws(OMEMOError) -> Void = { _ in }
    ) throws(OMEMOError) -> [UInt8] {
        let operation = encrypt ? "seal with AES-GCM" : "open an AES-GCM message"
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = self.aes128
        case 32: cipher = self.aes256
        default: throw OMEMOError(operation, reason: "a key of \(key.count) bytes")
        }
        guard iv.count == 12 || iv.count == 16 else { throw OMEMOError(operation, reason: "an IV of \(iv.count) bytes") }
        guard let count = Int32(exactly: input.count) else { throw OMEMOError(operation, reason: "too long") }
        guard let context = EVP_CIPHER_CTX_new() else { throw OMEMOError(operation, reason: "no memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        let mode: Int32 = encrypt ? 1 : 0
        guard EVP_CipherInit_ex2(context, cipher, nil, nil, mode, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
            EVP_CipherInit_ex2(context, nil, key, iv, mode, nil) == 1
        else { throw OMEMOError(operation, reason: "OpenSSL refused the key or IV") }
        var output = [UInt8](repeating: 0, count: input.count + Self.tagSize)
        var written: Int32 = 0
        if count > 0 {
            let updated = output.withUnsafeMutableBufferPointer { out in
                input.withUnsafeBufferPointer { EVP_CipherUpdate(context, out.baseAddress, &written, $0.baseAddress, count) }
            }
            guard updated == 1 else { throw OMEMOError(operation, reason: "OpenSSL failed") }
        }
        if !encrypt { try beforeFinal(context) }
        var last: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { out in EVP_CipherFinal_ex(context, out.baseAddress.map { $0 + Int(written) }, &last) }
        // On opening, a failed final step is a tag that does not match.
        guard finished == 1 else { throw OMEMOError(operation, reason: encrypt ? "OpenSSL failed" : "the tag does not match") }
        if encrypt { try afterFinal(context) }
        return Array(output.prefix(Int(written + last)))
    }
}
