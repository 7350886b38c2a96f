import Testing

@testable import OMEMO

/// A device's identity through libomemo-c with our crypto provider: generated, serialized,
/// fingerprinted, signing and verifying (XEdDSA, which runs on the provider's SHA-512).
@Suite("OMEMO identity key pair")
struct IdentityKeyPairTests {
    @Test("a new identity: a 33-byte public key (0x05 first), its fingerprint of 64 hex characters, a signature it verifies, another key's or a changed message's it does not")
    func identity() throws {
        let context = try SignalContext()
        let identity = try IdentityKeyPair.generate(in: context)
        let publicKey = try identity.publicKey
        #expect(publicKey.count == 33)
        #expect(publicKey.first == 0x05)
        let fingerprint = try identity.fingerprint
        #expect(fingerprint.hex.count == 64)
        #expect(fingerprint.key == Array(publicKey.dropFirst()))

        let message = Array("signed prekey".utf8)
        let signature = try identity.sign(message)
        #expect(signature.count == 64)
        #expect(IdentityKeyPair.verify(signature, of: message, by: publicKey, in: context))
        #expect(!IdentityKeyPair.verify(signature, of: Array("signed prekey!".utf8), by: publicKey, in: context))
        let other = try IdentityKeyPair.generate(in: context)
        #expect(try other.publicKey != publicKey)
        #expect(!IdentityKeyPair.verify(signature, of: message, by: try other.publicKey, in: context))
    }

    @Test("a malformed key or signature is not valid: false, never a crash")
    func malformed() throws {
        let context = try SignalContext()
        let identity = try IdentityKeyPair.generate(in: context)
        let message = Array("m".utf8)
        let signature = try identity.sign(message)
        let publicKey = try identity.publicKey
        #expect(!IdentityKeyPair.verify(signature, of: message, by: [], in: context))
        #expect(!IdentityKeyPair.verify(signature, of: message, by: [0x07] + publicKey.dropFirst(), in: context))
        #expect(!IdentityKeyPair.verify(Array(signature.prefix(10)), of: message, by: publicKey, in: context))
        #expect(!IdentityKeyPair.verify([], of: message, by: publicKey, in: context))
    }
}
