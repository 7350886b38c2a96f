import CLibOMEMO
import COpenSSL

/// The cryptography libomemo-c asks of its host for OMEMO 0.3 (XEP-0384 v0.3 rides on the
/// Signal protocol): random bytes, HMAC-SHA256 (RFC 2104), SHA-512 (FIPS 180-4) and AES in
/// CBC with PKCS#7 padding or CTR without (SP 800-38A), all on the system OpenSSL 3.
///
/// This file owns the `signal_crypto_provider` table and the contexts its callbacks hand
/// libomemo-c between calls: an HMAC's key and data (computed in one pass when it is
/// finished: the Signal protocol MACs a few hundred bytes at most), an `EVP_MD_CTX` for
/// SHA-512. A failure is a negative return (`SG_ERR_*`), never a trap: libomemo-c turns it
/// into an error of the operation that asked.
enum OMEMOCryptoProvider {
    /// The table a ``SignalContext`` installs (libomemo-c copies it). Made on each use: a C
    /// struct of function pointers is not `Sendable` to Swift, so it is no stored global.
    static var table: signal_crypto_provider {
        signal_crypto_provider(
        random_func: { data, length, _ in
            guard let data else { return SG_ERR_INVAL }
            guard let count = Int32(exactly: length) else { return SG_ERR_INVAL }
            return RAND_bytes(data, count) == 1 ? 0 : SG_ERR_UNKNOWN
        },
        hmac_sha256_init_func: { context, key, length, _ in
            guard let context else { return SG_ERR_INVAL }
            let state = HMACState(key: key.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? [])
            context.pointee = Unmanaged.passRetained(state).toOpaque()
            return 0
        },
        hmac_sha256_update_func: { context, data, length, _ in
            guard let context else { return SG_ERR_INVAL }
            let state = Unmanaged<HMACState>.fromOpaque(context).takeUnretainedValue()
            if let data, length > 0 { state.data.append(contentsOf: UnsafeBufferPointer(start: data, count: length)) }
            return 0
        },
        hmac_sha256_final_func: { context, output, _ in
            guard let context, let output else { return SG_ERR_INVAL }
            let state = Unmanaged<HMACState>.fromOpaque(context).takeUnretainedValue()
            guard let mac = state.finish() else { return SG_ERR_UNKNOWN }
            return OMEMOCryptoProvider.buffer(mac, into: output)
        },
        hmac_sha256_cleanup_func: { context, _ in
            guard let context else { return }
            Unmanaged<HMACState>.fromOpaque(context).release()
        },
        sha512_digest_init_func: { context, _ in
            guard let context else { return SG_ERR_INVAL }
            guard let digest = EVP_MD_CTX_new() else { return SG_ERR_NOMEM }
            guard EVP_DigestInit_ex(digest, EVP_sha512(), nil) == 1 else {
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
        sha512_digest_final_func: { context, output, _ in
            guard let context, let output else { return SG_ERR_INVAL }
            let digest = OpaquePointer(context)
            var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard EVP_DigestFinal_ex(digest, &bytes, &length) == 1,
                // Ready for the next digest, as libomemo-c expects.
                EVP_DigestInit_ex(digest, EVP_sha512(), nil) == 1
            else { return SG_ERR_UNKNOWN }
            return OMEMOCryptoProvider.buffer(Array(bytes.prefix(Int(length))), into: output)
        },
        sha512_digest_cleanup_func: { context, _ in
            guard let context else { return }
            EVP_MD_CTX_free(OpaquePointer(context))
        },
        encrypt_func: { output, cipher, key, keyLength, iv, ivLength, input, inputLength, _ in
            OMEMOCryptoProvider.aes(output, cipher, key, keyLength, iv, ivLength, input, inputLength, encrypt: true)
        },
        decrypt_func: { output, cipher, key, keyLength, iv, ivLength, input, inputLength, _ in
            OMEMOCryptoProvider.aes(output, cipher, key, keyLength, iv, ivLength, input, inputLength, encrypt: false)
        },
        user_data: nil
        )
    }

    /// An HMAC under way: its key and the data given so far.
    final class HMACState {
        let key: [UInt8]
        var data: [UInt8] = []

        init(key: [UInt8]) {
            self.key = key
        }

        /// HMAC-SHA256 of the data under the key; nil if OpenSSL fails.
        func finish() -> [UInt8]? {
            guard let keyLength = Int32(exactly: self.key.count) else { return nil }
            var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            let done = self.key.withUnsafeBufferPointer { key in
                self.data.withUnsafeBufferPointer { data in
                    HMAC(EVP_sha256(), key.baseAddress, keyLength, data.baseAddress, data.count, &mac, &length) != nil
                }
            }
            return done && length == 32 ? Array(mac.prefix(32)) : nil
        }
    }

    /// Hands `bytes` to libomemo-c as a new `signal_buffer` (it frees it).
    static func buffer(_ bytes: [UInt8], into output: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
        guard let buffer = bytes.withUnsafeBufferPointer({ signal_buffer_create($0.baseAddress, $0.count) }) else { return SG_ERR_NOMEM }
        output.pointee = buffer
        return 0
    }

    /// AES-128/192/256 by key length, in CBC with PKCS#7 padding or CTR without; the IV (or
    /// initial counter block) is one block.
    static func aes(
        _ output: UnsafeMutablePointer<OpaquePointer?>?, _ mode: Int32, _ key: UnsafePointer<UInt8>?, _ keyLength: Int,
        _ iv: UnsafePointer<UInt8>?, _ ivLength: Int, _ input: UnsafePointer<UInt8>?, _ inputLength: Int, encrypt: Bool
    ) -> Int32 {
        guard let output, let key, let iv, ivLength == 16, let count = Int32(exactly: inputLength) else { return SG_ERR_INVAL }
        let cipher: OpaquePointer?
        switch (mode, keyLength) {
        case (SG_CIPHER_AES_CBC_PKCS5, 16): cipher = EVP_aes_128_cbc()
        case (SG_CIPHER_AES_CBC_PKCS5, 24): cipher = EVP_aes_192_cbc()
        case (SG_CIPHER_AES_CBC_PKCS5, 32): cipher = EVP_aes_256_cbc()
        case (SG_CIPHER_AES_CTR_NOPADDING, 16): cipher = EVP_aes_128_ctr()
        case (SG_CIPHER_AES_CTR_NOPADDING, 24): cipher = EVP_aes_192_ctr()
        case (SG_CIPHER_AES_CTR_NOPADDING, 32): cipher = EVP_aes_256_ctr()
        default: return SG_ERR_INVAL
        }
        guard let context = EVP_CIPHER_CTX_new() else { return SG_ERR_NOMEM }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, cipher, nil, key, iv, encrypt ? 1 : 0) == 1 else { return SG_ERR_UNKNOWN }
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
        return Self.buffer(Array(bytes.prefix(Int(written + last))), into: output)
    }
}
