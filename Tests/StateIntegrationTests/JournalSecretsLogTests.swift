import Foundation
import IntegrationSupport
import Logging
import TestServers
import Testing

@testable import BridgeState

extension StateIntegration {
    /// What PostgreSQL writes in its log when a journal commit fails (issue 43): the text of
    /// the failing statement (`log_min_error_statement`), never an account's FAST token, which
    /// goes as a bound parameter.
    @Suite("Journal secrets and PostgreSQL's log", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct JournalSecretsLogTests {
        @Test("a commit refused for a lease held no more (SQLSTATE XB001) is logged by the server without the token it carried; one that passes stores it")
        func tokenNotInServerLog() async throws {
            let database = try await SharedPostgres.freshDatabase()
            let url = database.url, password = database.password
            let transport = "work-\(UInt32.random(in: 1...UInt32.max))"
            let secret = "fast-\(UUID().uuidString)"
            let token = StoredLogin.Token(secret: secret, mechanism: "HT-SHA-256-ENDP", expiry: Date(timeIntervalSinceNow: 86_400), passwordCheck: "0f0f")
            let entries: [JournalEntry] = [.seen(transport: transport, deduplicationKey: "u-1"), .login(transport: transport, StoredLogin(userAgentID: "ua", token: token))]
            // A claim on a lease the database never granted: bridge_fence refuses the commit.
            let stale = LeaseBook(instance: "node-a", logger: Logger(label: "test"))
            stale.leased = [transport]
            stale.grant(transport, LeaseBook.Grant(epoch: 41, validUntil: .now + .seconds(600)))
            let refused = try await Subprocess.offThread { () -> String? in
                let store = try PostgresStateStore(url: url, password: password, leases: stale)
                do {
                    try store.apply(entries, intakeThrough: nil)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            let error = try #require(refused, "the fence refused the commit")
            #expect(error.contains(StateStoreError.fencedState) || error.contains("no longer held"), "\(error)")
            // The server logs the error before it answers the client.
            let log = SharedPostgres.log
            #expect(log.contains("lease of \(transport)"), "the refusal is in the server's log")
            // The failing statement's text is logged with it (so a token inlined there would be).
            #expect(log.contains("STATEMENT:") && log.contains("bridge_fence(E'node-a', ARRAY[E'\(transport)']"), "the script's text is logged")
            #expect(!log.contains(secret), "the token is not")
            // Without instances to fence, the same entries commit, the token bound.
            let stored = try await Subprocess.offThread { () -> StoredLogin? in
                let store = try PostgresStateStore(url: url, password: password)
                try store.apply(entries, intakeThrough: nil)
                return try store.startingPoint(transport: transport).login
            }
            #expect(stored?.token?.secret == secret)
            #expect(!SharedPostgres.log.contains(secret))
        }
    }
}
