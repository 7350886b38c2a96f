import Foundation
import OMEMOState
import Testing

@testable import BridgeState

/// Secrets in a PostgreSQL journal commit (issue 43): an account's FAST token and OMEMO keys
/// leave the script's text for bound parameters, since PostgreSQL logs the text of a
/// statement that fails.
@Suite("PostgreSQL bound statements")
struct PostgresBoundStatementTests {
    @Test("SQLite's numbered placeholders become PostgreSQL's; a question mark not before a digit stays")
    func numbered() {
        let statement = PostgresBoundStatement(
            numbered: "UPDATE t SET a = ?2, b = '?' WHERE c = ?1 AND d = ?10?", values: [.text("x"), .integer(-7)]
        )
        #expect(statement.sql == "UPDATE t SET a = $2, b = '?' WHERE c = $1 AND d = $10?")
        #expect(statement.parameters == ["x", "-7"])
        #expect(PostgresBoundStatement(numbered: "", values: []).sql == "")
        #expect(PostgresBoundStatement(numbered: "?", values: []).sql == "?")
    }

    @Test("a FAST token and OMEMO private keys are in no script text, only in bound parameters, in the entries' order")
    func secretsAreBound() {
        let token = StoredLogin.Token(secret: "fast-secret-3c1f", mechanism: "HT-SHA-256-ENDP", expiry: Date(timeIntervalSince1970: 2_000_000_000), passwordCheck: "a1b2")
        let privateKey = [UInt8](repeating: 0x5A, count: 32)
        let keys = OMEMOKeys(
            deviceID: 77, identityPublicKey: [0x05] + Array(repeating: 7, count: 32), identityPrivateKey: privateKey,
            preKeys: [1: [1, 1]], nextPreKeyID: 2, signedPreKeys: [1: [0xAA]], sessions: [:], identities: [:]
        )
        let entries: [JournalEntry] = [
            .seen(transport: "work", deduplicationKey: "u-1"),
            .login(transport: "work", StoredLogin(userAgentID: "ua-1", token: token)),
            .omemo(account: "work", [.created(keys)]),
        ]
        let script = PostgresJournalScript(entries, intakeThrough: nil, fence: ("node-a", ["work": 3]))
        let encodedKey = Data(privateKey).base64EncodedString()
        #expect(script.sql.hasPrefix("SELECT bridge_fence("), "the fence still runs first")
        #expect(script.sql.contains("seen_unique_ids"))
        #expect(!script.sql.contains(token.secret) && !script.sql.contains(encodedKey) && !script.sql.contains("logins"))
        #expect(script.bound.first?.sql.hasPrefix("INSERT INTO logins") == true)
        #expect(script.bound.first?.parameters.contains(token.secret) == true)
        #expect(script.bound.dropFirst().contains { $0.sql.contains("omemo_device") && $0.parameters.contains(encodedKey) })
        #expect(script.bound.allSatisfy { !$0.sql.contains(token.secret) && !$0.sql.contains(encodedKey) && !$0.sql.contains("?") })
        #expect(PostgresJournalScript([.seen(transport: "work", deduplicationKey: "u-2")], intakeThrough: nil).bound.isEmpty)
    }
}
