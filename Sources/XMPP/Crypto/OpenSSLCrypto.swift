import COpenSSL

/// The cryptographic primitives the library needs, implemented with the system
/// OpenSSL (libcrypto) and nothing else.
///
/// Every OpenSSL call of the module's SASL code stays in this file: callers see
/// only Swift byte arrays and ``HashAlgorithm``, never a C type. The digest,
/// HMAC and PBKDF2 functions cannot fail for valid arguments, so a failure there
/// is an internal invariant violation and traps with a message; callers must
/// validate peer-provided parameters (such as a SCRAM iteration count) before
/// calling. Random generation can fail at run time (an unseeded or broken DRBG)
/// and therefore throws ``OpenSSLCryptoError``.
package enum OpenSSLCrypto {
    /// `H(data)`: the digest of `data` (EVP_Digest).
    static func digest(_ algorithm: HashAlgorithm, _ data: some Collection<UInt8>) -> [UInt8] {
        let input = Array(data)
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outputLength: UInt32 = 0
        let status = self.withBaseAddress(of: input) { inputPointer, inputCount in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                EVP_Digest(
                    inputPointer, inputCount,
                    outputBuffer.baseAddress, &outputLength,
                    self.messageDigest(algorithm), nil
                )
            }
        }
        guard status == 1, Int(outputLength) == algorithm.digestLength else {
            preconditionFailure("EVP_Digest failed for \(algorithm)")
        }
        return Array(output.prefix(Int(outputLength)))
    }

    /// `HMAC(key, data)` (RFC 2104) with the given hash function (one-shot `HMAC()`).
    static func hmac(
        _ algorithm: HashAlgorithm,
        key: some Collection<UInt8>,
        data: some Collection<UInt8>
    ) -> [UInt8] {
        let keyBytes = Array(key)
        let dataBytes = Array(data)
        guard let keyLength = Int32(exactly: keyBytes.count) else {
            preconditionFailure("HMAC key longer than Int32.max bytes")
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outputLength: UInt32 = 0
        let succeeded = self.withBaseAddress(of: keyBytes) { keyPointer, _ in
            self.withBaseAddress(of: dataBytes) { dataPointer, dataCount in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                    HMAC(
                        self.messageDigest(algorithm),
                        keyPointer, keyLength,
                        dataPointer, dataCount,
                        outputBuffer.baseAddress, &outputLength
                    ) != nil
                }
            }
        }
        guard succeeded, Int(outputLength) == algorithm.digestLength else {
            preconditionFailure("HMAC failed for \(algorithm)")
        }
        return Array(output.prefix(Int(outputLength)))
    }

    /// PBKDF2 (RFC 8018 §5.2) with HMAC over `algorithm`, producing one digest
    /// length of key material: SCRAM's `Hi(password, salt, i)` (RFC 5802 §2.2).
    ///
    /// - Precondition: `iterations` is in `1...Int32.max` and the password and
    ///   salt are shorter than `Int32.max` bytes. Validate peer input first.
    static func pbkdf2(
        _ algorithm: HashAlgorithm,
        password: some Collection<UInt8>,
        salt: some Collection<UInt8>,
        iterations: Int
    ) -> [UInt8] {
        let passwordBytes = Array(password)
        let saltBytes = Array(salt)
        guard iterations > 0, let iterationCount = Int32(exactly: iterations) else {
            preconditionFailure("PBKDF2 iteration count \(iterations) outside 1...Int32.max")
        }
        guard let passwordLength = Int32(exactly: passwordBytes.count),
              let saltLength = Int32(exactly: saltBytes.count) else {
            preconditionFailure("PBKDF2 password or salt longer than Int32.max bytes")
        }
        let keyLength = algorithm.digestLength
        var output = [UInt8](repeating: 0, count: keyLength)
        let status = self.withBaseAddress(of: passwordBytes) { passwordPointer, _ in
            self.withBaseAddress(of: saltBytes) { saltPointer, _ in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                    passwordPointer.withMemoryRebound(to: CChar.self, capacity: max(passwordBytes.count, 1)) {
                        PKCS5_PBKDF2_HMAC(
                            $0, passwordLength,
                            saltPointer, saltLength,
                            iterationCount,
                            self.messageDigest(algorithm),
                            Int32(keyLength),
                            outputBuffer.baseAddress
                        )
                    }
                }
            }
        }
        guard status == 1 else {
            preconditionFailure("PKCS5_PBKDF2_HMAC failed for \(algorithm)")
        }
        return output
    }

    /// `count` bytes from OpenSSL's cryptographically secure generator (RAND_bytes).
    ///
    /// - Precondition: `count` is in `0...Int32.max`.
    package static func randomBytes(count: Int) throws(OpenSSLCryptoError) -> [UInt8] {
        guard count >= 0, let requested = Int32(exactly: count) else {
            preconditionFailure("randomBytes count \(count) outside 0...Int32.max")
        }
        guard count > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        let status = output.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, requested)
        }
        guard status == 1 else {
            throw OpenSSLCryptoError.randomGenerationFailed
        }
        return output
    }

    /// Compares two byte strings in time that depends only on their lengths
    /// (CRYPTO_memcmp), for checking MACs and signatures.
    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, lhs.count) == 0
            }
        }
    }

    // MARK: - Private

    private static func messageDigest(_ algorithm: HashAlgorithm) -> OpaquePointer? {
        switch algorithm {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        }
    }

    /// Calls `body` with a non-null pointer to the bytes (OpenSSL rejects or
    /// misreads null pointers even for zero lengths) and their count.
    private static func withBaseAddress<Result>(
        of bytes: [UInt8],
        _ body: (UnsafePointer<UInt8>, Int) -> Result
    ) -> Result {
        bytes.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress {
                return body(base, buffer.count)
            }
            let placeholder: UInt8 = 0
            return withUnsafePointer(to: placeholder) { body($0, 0) }
        }
    }
}
