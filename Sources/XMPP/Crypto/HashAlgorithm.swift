/// A hash function usable for SCRAM (RFC 5802 §2.2, RFC 7677) and the other
/// digests, HMACs and key derivations of ``OpenSSLCrypto``.
public enum HashAlgorithm: Hashable, Sendable, CaseIterable {
    /// SHA-1 (FIPS 180-4), as used by SCRAM-SHA-1 (RFC 5802).
    case sha1
    /// SHA-256 (FIPS 180-4), as used by SCRAM-SHA-256 (RFC 7677).
    case sha256

    /// The length in bytes of this algorithm's output, which is also the
    /// length of an HMAC computed with it and of a SCRAM `SaltedPassword`.
    public var digestLength: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        }
    }
}
