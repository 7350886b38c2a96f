import Foundation
import Testing
import TestSupport

@testable import Bridge

/// What SIGHUP compares per account (issue 13, defect 10): a new password behind the
/// same source restarts the account; an unchanged one does not.
@Suite("Reload fingerprint")
struct BridgeRuntimeFingerprintTests {
    static func account(passwordFile: String) throws -> AccountConfiguration {
        let file = try ConfigurationLoaderTests.write(
            """
            [accounts.work]
            jid = "work@example.test"
            password_file = "\(passwordFile)"
            """
        )
        var loader = ConfigurationLoader(file: file)
        return try #require(try loader.loadBridge().accounts["work"])
    }

    @Test func aNewPasswordInTheSameFileChangesTheFingerprint() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("password")
        try "first secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        let account = try Self.account(passwordFile: path)
        let before = BridgeRuntime.fingerprint(account)
        #expect(BridgeRuntime.fingerprint(account) == before)
        try "second secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        let after = BridgeRuntime.fingerprint(account)
        #expect(after != before)
        #expect(!after.contains("secret"), "the fingerprint must not hold the password")
    }

    @Test func catchUpSettingsAreCompared() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("password")
        try "pw".write(toFile: path, atomically: true, encoding: .utf8)
        var account = try Self.account(passwordFile: path)
        let before = BridgeRuntime.fingerprint(account)
        account.catchUp = false
        #expect(BridgeRuntime.fingerprint(account) != before)
    }
}

/// A reload while the password cannot be read keeps the running account (review finding).
@Suite("Reload fingerprint when the secret cannot be read")
struct BridgeRuntimeUnreadableSecretTests {
    @Test func anUnreadablePasswordKeepsTheRunningFingerprint() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("password")
        try "secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        let account = try BridgeRuntimeFingerprintTests.account(passwordFile: path)
        let running = BridgeRuntime.fingerprint(account)
        try FileManager.default.removeItem(atPath: path)
        let now = BridgeRuntime.fingerprint(account)
        #expect(now.hasSuffix("|unreadable"))
        #expect(BridgeRuntime.reloadFingerprint(now, running: running) == running)
        // A changed setting still counts, readable or not.
        var changed = account
        changed.catchUp = false
        #expect(BridgeRuntime.reloadFingerprint(BridgeRuntime.fingerprint(changed), running: running) != running)
    }
}
