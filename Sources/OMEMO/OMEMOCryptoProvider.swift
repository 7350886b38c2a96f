import CLibOMEMO
import COpenSSL

/// The cryptography libomemo-c asks of its host for OMEMO 0.3 (XEP-0384 v0.3 rides on the
/// Signal protocol): random bytes, HMAC-SHA256 (RFC 2104), SHA-512 (FIPS 180-4) and AES in
/// CBC with PKCS#7 padding or CTR without (SP 800-38A), all on the system OpenSSL 3.
///
/// This file owns the OpenSSL objects the callbacks use: the algorithms, fetched once
/// (OpenSSL 3 looks an algorithm named by `EVP_sha256()` and the like up again, under a
/// lock, on every use: most of what an HMAC cost before), and HMAC contexts kept for reuse
/// (`EVP_MAC_CTX`; a new key each time). libomemo-c gets this object as the table's
/// `user_data`; a ``SignalContext`` owns it and, like libomemo-c's context, uses it from one
/// isolation domain at a time. A failure is a negative return (`SG_ERR_*`), never a trap:
/// libomemo-c turns it into an error of the operation that asked.
final class OMEMOCryptoProvider {
    /// `EVP_MAC` "HMAC".
    private let mac: OpaquePointer
    /// `EVP_MAC_CTX`s set to SHA-256 and given back, ready for another key. Each still
    /// holds the key of its last use (a chain or root key) until it is used again or freed.
    private var spare: [OpaquePointer] = []
    /// `EVP_MD` SHA-512.
    private let sha512: OpaquePointer
    /// `EVP_CIPHER`s by mode and key length.
    private let ciphers: [Cipher: OpaquePointer]

    /// A cipher libomemo-c asks for: its mode (`SG_CIPHER_*`) and key length in bytes.
    struct Cipher: Hashable {
        var mode: Int32
        var keyLength: Int
    }

    /// At most this many HMAC contexts are kept (libomemo-c has a few in flight at once).
    static let spareLimit = 4

    init() throws(OMEMOError) {
        func fetch(_ made: OpaquePointer?, _ what: String) throws(OMEMOError) -> OpaquePointer {
            guard let made else { throw OMEMOError("set up the crypto provider", reason: "OpenSSL has no \(what)") }
            return made
        }
        let mac = try fetch(EVP_MAC_fetch(nil, "HMAC", nil), "HMAC")
        // The first context, made now: if OpenSSL cannot make one, say so at the start.
        let first = Self.newContext(mac)
        let sha512 = EVP_MD_fetch(nil, "SHA512", nil)
        let names: [(Cipher, String)] = [
            (Cipher(mode: SG_CIPHER_AES_CBC_PKCS5, keyLength: 16), "AES-128-CBC"), (Cipher(mode: SG_CIPHER_AES_CBC_PKCS5, keyLength: 24), "AES-192-CBC"),
            (Cipher(mode: SG_CIPHER_AES_CBC_PKCS5, keyLength: 32), "AES-256-CBC"), (Cipher(mode: SG_CIPHER_AES_CTR_NOPADDING, keyLength: 16), "AES-128-CTR"),
            (Cipher(mode: SG_CIPHER_AES_CTR_NOPADDING, keyLength: 24), "AES-192-CTR"), (Cipher(mode: SG_CIPHER_AES_CTR_NOPADDING, keyLength: 32), "AES-256-CTR"),
        ]
        var ciphers: [Cipher: OpaquePointer] = [:]
        for (cipher, name) in names {
            if let fetched = EVP_CIPHER_fetch(nil, name, nil) { ciphers[cipher] = fetched }
        }
        guard let first, let sha512, ciphers.count == names.count else {
            if let first { EVP_MAC_CTX_free(first) }
            EVP_MAC_free(mac)
            if let sha512 { EVP_MD_free(sha512) }
            ciphers.values.forEach { EVP_CIPHER_free($0) }
            throw OMEMOError("set up the crypto provider", reason: "OpenSSL lacks SHA-256 HMAC, SHA-512 or AES-CBC/CTR")
        }
        self.mac = mac
        self.spare = [first]
        self.sha512 = sha512
        self.ciphers = ciphers
    }

    deinit {
        self.spare.forEach { EVP_MAC_CTX_free($0) }
        EVP_MAC_free(self.mac)
        EVP_MD_free(self.sha512)
        self.ciphers.values.forEach { EVP_CIPHER_free($0) }
    }

    /// What libomemo-c hands back to each callback: this object, not retained (the
    /// ``SignalContext`` that installed the table keeps it).
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func of(_ userData: UnsafeMutableRawPointer?) -> OMEMOCryptoProvider? {
        userData.map { Unmanaged<OMEMOCryptoProvider>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The table a ``SignalContext`` installs (libomemo-c copies it), with this object as
    /// its `user_data`.
    var table: signal_crypto_provider {
        signal_crypto_provider(
            random_func: { data, length, _ in
                guard let data, let count = Int32(exactly: length) else { return SG_ERR_INVAL }
                return RAND_bytes(data, count) == 1 ? 0 : SG_ERR_UNKNOWN
            },
            hmac_sha256_init_func: { context, key, length, userData in
                guard let context, let provider = OMEMOCryptoProvider.of(userData) else { return SG_ERR_INVAL }
                guard let mac = provider.hmac(key: key, length: length) else { return SG_ERR_UNKNOWN }
                context.pointee = UnsafeMutableRawPointer(mac)
                return 0
            },
            hmac_sha256_update_func: { context, data, length, _ in
                guard let context else { return SG_ERR_INVAL }
                guard length == 0 || EVP_MAC_update(OpaquePointer(context), data, length) == 1 else { return SG_ERR_UNKNOWN }
                return 0
            },
            hmac_sha256_final_func: { context, output, _ in
                guard let context, let output else { return SG_ERR_INVAL }
                var mac = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
                return withUnsafeMutableBytes(of: &mac) { bytes in
                    var length = 0
                    let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    guard EVP_MAC_final(OpaquePointer(context), base, &length, bytes.count) == 1, length == 32 else { return SG_ERR_UNKNOWN }
                    return OMEMOCryptoProvider.buffer(UnsafeBufferPointer(start: base, count: length), into: output)
                }
            },
            hmac_sha256_cleanup_func: { context, userData in
                guard let context else { return }
                guard let provider = OMEMOCryptoProvider.of(userData) else { return EVP_MAC_CTX_free(OpaquePointer(context)) }
                provider.giveBack(OpaquePointer(context))
            },
            sha512_digest_init_func: { context, userData in
                guard let context, let provider = OMEMOCryptoProvider.of(userData) else { return SG_ERR_INVAL }
                guard let digest = EVP_MD_CTX_new() else { return SG_ERR_NOMEM }
                guard EVP_DigestInit_ex2(digest, provider.sha512, nil) == 1 else {
                    EVP_MD_CTX_free(digest)
                    return SG_ERR_UNKNOWN
                }
                context.pointee = UnsafeMutableRawPointer(digest)
                return 0
            },
            sha512_digest_update_func: { context, data, length, _ in
                guard let context else { return SG_ERR_INVAL }
                guard length == 0 || EVP_DigestUpdate(OpaquePointer(context), data, length) == 1 else { return SG_ERR_UNKNOWN }
                return 0
            },
            sha512_digest_final_func: { context, output, userData in
                guard let context, let output, let provider = OMEMOCryptoProvider.of(userData) else { return SG_ERR_INVAL }
                let digest = OpaquePointer(context)
                var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
                var length: UInt32 = 0
                guard EVP_DigestFinal_ex(digest, &bytes, &length) == 1,
                    // Ready for the next digest, as libomemo-c expects.
                    EVP_DigestInit_ex2(digest, provider.sha512, nil) == 1
                else { return SG_ERR_UNKNOWN }
                return bytes.withUnsafeBufferPointer { OMEMOCryptoProvider.buffer(UnsafeBufferPointer(rebasing: $0.prefix(Int(length))), into: output) }
            },
            sha512_digest_cleanup_func: { context, _ in
                guard let context else { return }
                EVP_MD_CTX_free(OpaquePointer(context))
            },
            encrypt_func: { output, cipher, key, keyLength, iv, ivLength, input, inputLength, userData in
                guard let provider = OMEMOCryptoProvider.of(userData) else { return SG_ERR_INVAL }
                return provider.aes(output, cipher, key, keyLength, iv, ivLength, input, inputLength, encrypt: true)
            },
            decrypt_func: { output, cipher, key, keyLength, iv, ivLength, input, inputLength, userData in
                guard let provider = OMEMOCryptoProvider.of(userData) else { return SG_ERR_INVAL }
                return provider.aes(output, cipher, key, keyLength, iv, ivLength, input, inputLength, encrypt: false)
            },
            user_data: self.userData
        )
    }

    /// A new HMAC context set to SHA-256 (no key yet), or nil.
    private static func newContext(_ mac: OpaquePointer) -> OpaquePointer? {
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        // Both strings outlive the parameters that point at them.
        let set = "digest".withCString { key in
            "SHA256".withCString { name in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(key, UnsafeMutablePointer(mutating: name), 0), OSSL_PARAM_construct_end(),
                ]
                return EVP_MAC_CTX_set_params(context, &parameters) == 1
            }
        }
        guard set else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        return context
    }

    /// An HMAC-SHA256 context under `key` (a spare one, or a new one). A key of no bytes is
    /// a key all the same: OpenSSL would take a missing one for "the key of before". A
    /// missing key of some length is refused (nil).
    private func hmac(key: UnsafePointer<UInt8>?, length: Int) -> OpaquePointer? {
        guard key != nil || length == 0 else { return nil }
        guard let context = self.spare.popLast() ?? Self.newContext(self.mac) else { return nil }
        var none: UInt8 = 0
        let ready = withUnsafePointer(to: &none) { empty in EVP_MAC_init(context, key ?? empty, length, nil) == 1 }
        guard ready else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        return context
    }

    /// `context` back for the next HMAC, or freed once ``spareLimit`` are kept.
    private func giveBack(_ context: OpaquePointer) {
        if self.spare.count < Self.spareLimit {
            self.spare.append(context)
        } else {
            EVP_MAC_CTX_free(context)
        }
    }

    /// Hands `bytes` to libomemo-c as a new `signal_buffer` (it frees it).
    static func buffer(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
        guard let buffer = signal_buffer_create(bytes.baseAddress, bytes.count) else { return SG_ERR_NOMEM }
        output.pointee = buffer
        return 0
    }

    /// AES-128/192/256 by key length, in CBC with PKCS#7 padding or CTR without; the IV (or
    /// initial counter block) is one block.
    private func aes(
        _ output: UnsafeMutablePointer<OpaquePointer?>?, _ mode: Int32, _ key: UnsafePointer<UInt8>?, _ keyLength: Int,
        _ iv: UnsafePointer<UInt8>?, _ ivLength: Int, _ input: UnsafePointer<UInt8>?, _ inputLength: Int, encrypt: Bool
    ) -> Int32 {
        guard let output, let key, let iv, ivLength == 16, let count = Int32(exactly: inputLength) else { return SG_ERR_INVAL }
        guard let cipher = self.ciphers[Cipher(mode: mode, keyLength: keyLength)] else { return SG_ERR_INVAL }
        guard let context = EVP_CIPHER_CTX_new() else { return SG_ERR_NOMEM }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex2(context, cipher, key, iv, encrypt ? 1 : 0, nil) == 1 else { return SG_ERR_UNKNOWN }
        if mode == SG_CIPHER_AES_CTR_NOPADDING { EVP_CIPHER_CTX_set_padding(context, 0) }
        var bytes = [UInt8](repeating: 0, count: inputLength + 16)
        var written: Int32 = 0
        var last: Int32 = 0
        let done = bytes.withUnsafeMutableBufferPointer { out in
            guard EVP_CipherUpdate(context, out.baseAddress, &written, input ?? UnsafePointer(out.baseAddress), count) == 1 else { return false }
            return EVP_CipherFinal_ex(context, out.baseAddress.map { $0 + Int(written) }, &last) == 1
        }
        // A failed final block on decryption is bad padding: a forged or broken message.
        guard done else { return SG_ERR_UNKNOWN }
        return bytes.withUnsafeBufferPointer { Self.buffer(UnsafeBufferPointer(rebasing: $0.prefix(Int(written + last))), into: output) }
    }
}
