import CLibOMEMO
import Foundation
import Testing

@testable import OMEMO

/// The cryptography libomemo-c gets from us, on OpenSSL, against published vectors: HMAC-SHA256
/// (RFC 4231 §4), SHA-512 (FIPS 180-4 examples), AES-CBC and AES-CTR (NIST SP 800-38A
/// F.2, F.5); called through the very table libomemo-c calls.
@Suite("OMEMO crypto provider on OpenSSL")
struct OMEMOCryptoProviderTests {
    let provider: OMEMOCryptoProvider
    let table: signal_crypto_provider
    /// What libomemo-c passes back to each callback.
    var user: UnsafeMutableRawPointer { self.provider.userData }

    init() throws {
        self.provider = try OMEMOCryptoProvider()
        self.table = self.provider.table
    }

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0]) + String(digits[$0 + 1]), radix: 16)! }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The bytes of a buffer the provider made, which is then freed (as libomemo-c does).
    static func take(_ buffer: OpaquePointer?) -> [UInt8] {
        guard let buffer else { return [] }
        defer { signal_buffer_free(buffer) }
        return Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
    }

    @Test("HMAC-SHA256, RFC 4231 test cases 1, 2 and 6 (a key longer than a block), the data given in two pieces")
    func hmac() throws {
        let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
            (Array(repeating: 0x0b, count: 20), Array("Hi There".utf8), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (
                Array(repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
        ]
        for (key, data, mac) in cases {
            var context: UnsafeMutableRawPointer?
            #expect(self.table.hmac_sha256_init_func(&context, key, key.count, self.user) == 0)
            let half = data.count / 2
            #expect(Array(data[..<half]).withUnsafeBufferPointer { self.table.hmac_sha256_update_func(context, $0.baseAddress, $0.count, self.user) } == 0)
            #expect(Array(data[half...]).withUnsafeBufferPointer { self.table.hmac_sha256_update_func(context, $0.baseAddress, $0.count, self.user) } == 0)
            var output: OpaquePointer?
            #expect(self.table.hmac_sha256_final_func(context, &output, self.user) == 0)
            self.table.hmac_sha256_cleanup_func(context, self.user)
            #expect(Self.hex(Self.take(output)) == mac)
        }
    }

    /// An HMAC through the table: begun, fed in `pieces`, finished, given back.
    func mac(key: [UInt8], _ pieces: [[UInt8]]) -> String {
        var context: UnsafeMutableRawPointer?
        #expect(self.table.hmac_sha256_init_func(&context, key.isEmpty ? nil : key, key.count, self.user) == 0)
        for piece in pieces {
            #expect(piece.withUnsafeBufferPointer { self.table.hmac_sha256_update_func(context, $0.baseAddress, $0.count, self.user) } == 0)
        }
        var output: OpaquePointer?
        #expect(self.table.hmac_sha256_final_func(context, &output, self.user) == 0)
        self.table.hmac_sha256_cleanup_func(context, self.user)
        return Self.hex(Self.take(output))
    }

    @Test("HMAC contexts are reused with the next key, never with the last one: an empty key is a key of zero bytes; two in flight at once stay apart")
    func hmacReuse() {
        let fox = Array("The quick brown fox jumps over the lazy dog".utf8)
        let foxMAC = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        let emptyMAC = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        for _ in 0..<3 {
            #expect(self.mac(key: Array("key".utf8), [fox]) == foxMAC)
            // Right after a context held "key": OpenSSL must not take the missing key for it.
            #expect(self.mac(key: [], []) == emptyMAC)
        }
        // Two at once (a key derivation inside a MAC): each keeps its own key and data.
        var first: UnsafeMutableRawPointer?
        var second: UnsafeMutableRawPointer?
        let key = Array("key".utf8)
        #expect(self.table.hmac_sha256_init_func(&first, key, key.count, self.user) == 0)
        #expect(self.table.hmac_sha256_init_func(&second, nil, 0, self.user) == 0)
        #expect(fox.withUnsafeBufferPointer { self.table.hmac_sha256_update_func(first, $0.baseAddress, $0.count, self.user) } == 0)
        var outputs: [OpaquePointer?] = [nil, nil]
        #expect(self.table.hmac_sha256_final_func(second, &outputs[1], self.user) == 0)
        #expect(self.table.hmac_sha256_final_func(first, &outputs[0], self.user) == 0)
        self.table.hmac_sha256_cleanup_func(first, self.user)
        self.table.hmac_sha256_cleanup_func(second, self.user)
        #expect(Self.hex(Self.take(outputs[0])) == foxMAC)
        #expect(Self.hex(Self.take(outputs[1])) == emptyMAC)
    }

    @Test("SHA-512 of \"abc\" and of nothing (FIPS 180-4 examples); the context is ready again after each digest")
    func sha512() {
        var context: UnsafeMutableRawPointer?
        #expect(self.table.sha512_digest_init_func(&context, self.user) == 0)
        defer { self.table.sha512_digest_cleanup_func(context, self.user) }
        let abc = Array("abc".utf8)
        #expect(abc.withUnsafeBufferPointer { self.table.sha512_digest_update_func(context, $0.baseAddress, $0.count, self.user) } == 0)
        var first: OpaquePointer?
        #expect(self.table.sha512_digest_final_func(context, &first, self.user) == 0)
        #expect(
            Self.hex(Self.take(first))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        var second: OpaquePointer?
        #expect(self.table.sha512_digest_final_func(context, &second, self.user) == 0)
        #expect(
            Self.hex(Self.take(second))
                == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
    }

    func crypt(_ mode: Int32, key: [UInt8], iv: [UInt8], _ input: [UInt8], encrypt: Bool) -> (Int32, [UInt8]) {
        var output: OpaquePointer?
        let result = input.withUnsafeBufferPointer { input in
            encrypt
                ? self.table.encrypt_func(&output, mode, key, key.count, iv, iv.count, input.baseAddress, input.count, self.user)
                : self.table.decrypt_func(&output, mode, key, key.count, iv, iv.count, input.baseAddress, input.count, self.user)
        }
        return (result, Self.take(output))
    }

    static let plaintext = bytes(
        "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"
    )

    @Test("AES-128-CBC and AES-256-CBC (SP 800-38A F.2.1, F.2.5): the four blocks, then one block of PKCS#7 padding; decrypted back")
    func cbc() {
        let iv = Self.bytes("000102030405060708090a0b0c0d0e0f")
        let cases: [(key: String, ciphertext: String)] = [
            (
                "2b7e151628aed2a6abf7158809cf4f3c",
                "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"
            ),
            (
                "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
                "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"
            ),
        ]
        for (key, ciphertext) in cases {
            let (encrypted, output) = self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: Self.bytes(key), iv: iv, Self.plaintext, encrypt: true)
            #expect(encrypted == 0)
            #expect(output.count == 80)
            #expect(Self.hex(Array(output.prefix(64))) == ciphertext)
            let (decrypted, back) = self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: Self.bytes(key), iv: iv, output, encrypt: false)
            #expect(decrypted == 0)
            #expect(back == Self.plaintext)
        }
    }

    @Test("AES-128-CTR (SP 800-38A F.5.1): no padding, the same length both ways")
    func ctr() {
        let key = Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let counter = Self.bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let (encrypted, output) = self.crypt(SG_CIPHER_AES_CTR_NOPADDING, key: key, iv: counter, Self.plaintext, encrypt: true)
        #expect(encrypted == 0)
        #expect(
            Self.hex(output)
                == "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"
        )
        let (decrypted, back) = self.crypt(SG_CIPHER_AES_CTR_NOPADDING, key: key, iv: counter, output, encrypt: false)
        #expect(decrypted == 0)
        #expect(back == Self.plaintext)
    }

    @Test("bad input is an error code, never a trap: an IV not one block, a key of no AES size, an unknown mode, a CBC ciphertext cut short")
    func badInput() {
        let key = Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = Self.bytes("000102030405060708090a0b0c0d0e0f")
        #expect(self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: key, iv: Array(iv.prefix(12)), Self.plaintext, encrypt: true).0 == SG_ERR_INVAL)
        #expect(self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: Array(key.prefix(15)), iv: iv, Self.plaintext, encrypt: true).0 == SG_ERR_INVAL)
        #expect(self.crypt(99, key: key, iv: iv, Self.plaintext, encrypt: true).0 == SG_ERR_INVAL)
        let (_, ciphertext) = self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: key, iv: iv, Self.plaintext, encrypt: true)
        #expect(self.crypt(SG_CIPHER_AES_CBC_PKCS5, key: key, iv: iv, Array(ciphertext.dropLast(3)), encrypt: false).0 < 0)
    }

    @Test("random: the bytes asked for, different each time")
    func random() {
        var first = [UInt8](repeating: 0, count: 32)
        var second = [UInt8](repeating: 0, count: 32)
        #expect(first.withUnsafeMutableBufferPointer { self.table.random_func($0.baseAddress, $0.count, self.user) } == 0)
        #expect(second.withUnsafeMutableBufferPointer { self.table.random_func($0.baseAddress, $0.count, self.user) } == 0)
        #expect(first != second)
    }
}
