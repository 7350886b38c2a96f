import Testing

@testable import OMEMO

/// AES-GCM on OpenSSL against the GCM specification's test cases 3 (AES-128) and 15
/// (AES-256), and OMEMO 0.3's payload sealing around it.
@Suite("AES-GCM and the OMEMO payload")
struct AESGCMTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0]) + String(digits[$0 + 1]), radix: 16)! }
    }

    static let plaintext = bytes(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
    )
    static let iv = bytes("cafebabefacedbaddecaf888")

    @Test("test cases 3 and 15 of the GCM specification: ciphertext and tag; opened back", arguments: [
        (
            "feffe9928665731c6d6a8f9467308308",
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
            "4d5c2af327cd64a62cf35abd2ba6fab4"
        ),
        (
            "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
            "b094dac5d93471bdec1a502270e3cc6c"
        ),
    ])
    func vectors(key: String, ciphertext: String, tag: String) throws {
        let sealed = try AESGCM().seal(Self.plaintext, key: Self.bytes(key), iv: Self.iv)
        #expect(sealed.ciphertext == Self.bytes(ciphertext))
        #expect(sealed.tag == Self.bytes(tag))
        #expect(try AESGCM().open(sealed.ciphertext, tag: sealed.tag, key: Self.bytes(key), iv: Self.iv) == Self.plaintext)
    }

    @Test("what does not authenticate is refused: a changed byte, another tag, another key; bad sizes are refused before OpenSSL")
    func refused() throws {
        let key = Self.bytes("feffe9928665731c6d6a8f9467308308")
        let sealed = try AESGCM().seal(Self.plaintext, key: key, iv: Self.iv)
        var changed = sealed.ciphertext
        changed[5] ^= 1
        #expect(throws: OMEMOError("open an AES-GCM message", reason: "the tag does not match")) { try AESGCM().open(changed, tag: sealed.tag, key: key, iv: Self.iv) }
        #expect(throws: OMEMOError.self) { try AESGCM().open(sealed.ciphertext, tag: Array(repeating: 0, count: 16), key: key, iv: Self.iv) }
        #expect(throws: OMEMOError.self) { try AESGCM().open(sealed.ciphertext, tag: sealed.tag, key: Array(repeating: 1, count: 16), iv: Self.iv) }
        #expect(throws: OMEMOError("open an AES-GCM message", reason: "a tag of 8 bytes")) { try AESGCM().open(sealed.ciphertext, tag: Array(sealed.tag.prefix(8)), key: key, iv: Self.iv) }
        #expect(throws: OMEMOError("seal with AES-GCM", reason: "a key of 24 bytes")) { try AESGCM().seal([1], key: Array(repeating: 0, count: 24), iv: Self.iv) }
        #expect(throws: OMEMOError("seal with AES-GCM", reason: "an IV of 8 bytes")) { try AESGCM().seal([1], key: key, iv: Array(Self.iv.prefix(8))) }
    }

    @Test("an OMEMO payload: sealed under a fresh key and IV each time, opened with key ‖ tag; an early client's form (the tag after the ciphertext) opens too; empty text too")
    func payload() throws {
        let text = Array("hello from the bridge 😀".utf8)
        let first = try OMEMOPayload.seal(text, with: try AESGCM())
        let second = try OMEMOPayload.seal(text, with: try AESGCM())
        #expect(first.keyMaterial.count == 32 && first.iv.count == 12 && first.ciphertext.count == text.count)
        #expect(first.keyMaterial != second.keyMaterial && first.iv != second.iv)
        #expect(try OMEMOPayload.open(first.ciphertext, keyMaterial: first.keyMaterial, iv: first.iv, with: try AESGCM()) == text)
        let early = first.ciphertext + first.keyMaterial.suffix(16)
        #expect(try OMEMOPayload.open(early, keyMaterial: Array(first.keyMaterial.prefix(16)), iv: first.iv, with: try AESGCM()) == text)
        let sixteen = try AESGCM().seal(text, key: Array(first.keyMaterial.prefix(16)), iv: Array(repeating: 3, count: 16))
        #expect(try AESGCM().open(sixteen.ciphertext, tag: sixteen.tag, key: Array(first.keyMaterial.prefix(16)), iv: Array(repeating: 3, count: 16)) == text)
        let empty = try OMEMOPayload.seal([], with: try AESGCM())
        #expect(try OMEMOPayload.open(empty.ciphertext, keyMaterial: empty.keyMaterial, iv: empty.iv, with: try AESGCM()) == [])
        #expect(throws: OMEMOError.self) { try OMEMOPayload.open(first.ciphertext, keyMaterial: Array(first.keyMaterial.prefix(20)), iv: first.iv, with: try AESGCM()) }
        #expect(throws: OMEMOError.self) { try OMEMOPayload.open(first.ciphertext, keyMaterial: second.keyMaterial, iv: first.iv, with: try AESGCM()) }
    }
}
