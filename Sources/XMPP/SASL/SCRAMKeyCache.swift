import Foundation
import NIOConcurrencyHelpers

/// Salted passwords already derived for one account (RFC 5802 §3: SaltedPassword :=
/// Hi(Normalize(password), salt, i), the PBKDF2 step), so a reconnect to the same server,
/// which sends the same salt and iteration count, costs no PBKDF2 on the event loop.
///
/// Keyed by mechanism hash, a digest of the password, salt and iteration count; a changed
/// password or salt derives afresh. Held in memory only, a few entries per account (the
/// salted password is as sensitive as the password the process holds anyway).
public final class SCRAMKeyCache: Sendable {
    private struct Key: Hashable {
        var algorithm: HashAlgorithm
        var password: [UInt8]
        var salt: Data
        var iterations: Int
    }

    private let state = NIOLockedValueBox<(entries: [Key: [UInt8]], derivations: Int)>(([:], 0))
    /// Entries kept at most (different servers or mechanisms of one account).
    public let capacity: Int

    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// How many salted passwords were derived (cache misses) so far.
    public var derivationCount: Int { self.state.withLockedValue { $0.derivations } }

    /// The salted password for these inputs: from the cache, or derived with `derive` and kept.
    func saltedPassword(
        algorithm: HashAlgorithm, password: [UInt8], salt: Data, iterations: Int, derive: () -> [UInt8]
    ) -> [UInt8] {
        let key = Key(algorithm: algorithm, password: OpenSSLCrypto.digest(.sha256, password), salt: salt, iterations: iterations)
        if let known = self.state.withLockedValue({ $0.entries[key] }) { return known }
        let derived = derive()
        self.state.withLockedValue { state in
            state.derivations += 1
            if state.entries.count >= self.capacity { state.entries.removeAll() }
            state.entries[key] = derived
        }
        return derived
    }
}
