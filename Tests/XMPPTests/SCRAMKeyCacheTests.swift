import Testing

@testable import XMPP

/// A reconnect to the same server skips PBKDF2 (issue 13, defect 6): the salted password
/// comes from the account's cache, and the exchange is byte for byte the RFC's.
@Suite("SCRAMKeyCache")
struct SCRAMKeyCacheTests {
    static func exchange(cache: SCRAMKeyCache, password: String = "pencil", serverFirst: String = SCRAMTests.sha1ServerFirst) throws -> String {
        var machine = try SCRAMStateMachine(
            algorithm: .sha1, username: "user", password: password, clientNonce: SCRAMTests.sha1ClientNonce, keyCache: cache
        )
        _ = machine.start()
        return SCRAMTests.text(try machine.challengeReceived(SCRAMTests.bytes(serverFirst)))
    }

    @Test func theSecondExchangeWithTheSameSaltDerivesNothingAndStillMatchesTheVector() throws {
        let cache = SCRAMKeyCache()
        #expect(try Self.exchange(cache: cache) == SCRAMTests.sha1ClientFinal)
        #expect(cache.derivationCount == 1)
        #expect(try Self.exchange(cache: cache) == SCRAMTests.sha1ClientFinal)
        #expect(cache.derivationCount == 1)
    }

    @Test func anotherPasswordSaltOrCountDerivesAfresh() throws {
        let cache = SCRAMKeyCache()
        _ = try Self.exchange(cache: cache)
        // A changed password must never reuse the old key.
        #expect(try Self.exchange(cache: cache, password: "ink") != SCRAMTests.sha1ClientFinal)
        #expect(cache.derivationCount == 2)
        let otherSalt = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf93,i=4096"
        _ = try Self.exchange(cache: cache, serverFirst: otherSalt)
        let otherCount = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4097"
        _ = try Self.exchange(cache: cache, serverFirst: otherCount)
        #expect(cache.derivationCount == 4)
        // All still known: no further derivation.
        _ = try Self.exchange(cache: cache, serverFirst: otherSalt)
        #expect(cache.derivationCount == 4)
    }

    @Test func theCacheStaysSmall() throws {
        let cache = SCRAMKeyCache(capacity: 2)
        for count in 4096..<4100 {
            _ = try Self.exchange(cache: cache, serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=\(count)")
        }
        #expect(cache.derivationCount == 4)
        // The newest is kept.
        _ = try Self.exchange(cache: cache, serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4099")
        #expect(cache.derivationCount == 4)
    }
}
