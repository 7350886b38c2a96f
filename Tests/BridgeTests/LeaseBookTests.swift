import Foundation
import Logging
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeState

/// What this instance may work on (issue 26): leased resources only while their grant is
/// good, the rest always; the claims a commit makes.
@Suite("Lease book")
struct LeaseBookTests {
    @Test("a leased resource may be worked on only until its grant ends; others always; claims name the epochs, stale ones apart")
    func grants() {
        let book = LeaseBook(instance: "node-a", logger: Logger(label: "test"))
        book.leased = ["work", "home"]
        let now = ContinuousClock.now
        #expect(book.mayWork("http-in", now: now), "not leased: runs on every instance")
        #expect(!book.mayWork("work", now: now), "leased, not granted")
        book.grant("work", .init(epoch: 7, validUntil: now.advanced(by: .seconds(8))))
        book.grant("home", .init(epoch: 3, validUntil: now.advanced(by: .seconds(1))))
        #expect(book.mayWork("work", now: now.advanced(by: .seconds(5))))
        #expect(!book.mayWork("work", now: now.advanced(by: .seconds(8))), "the end of the grant is excluded")
        let claims = book.claims(for: ["work", "home", "http-in"], now: now.advanced(by: .seconds(2)))
        #expect(claims.claims == ["work": 7])
        #expect(claims.stale == ["home"])
        book.revoke("work")
        #expect(!book.mayWork("work", now: now))
    }

    @Test("array parameters quote every element: quotes and backslashes escaped, commas and braces kept")
    func arrayLiteral() {
        #expect(PostgresArray.text([]) == "{}")
        #expect(PostgresArray.text(["a", "b,c", "d\"e", "f\\g", "{h}"]) == #"{"a","b,c","d\"e","f\\g","{h}"}"#)
    }

    @Test("a commit's script claims its leases first and notifies each target's owner once")
    func fencedScript() {
        let delivery = Delivery(
            sequence: 5, channel: "c", target: Endpoint(transport: "home", address: "bob@example.test"), body: "b", originalBody: "b", nick: "n",
            type: .chat, source: Endpoint(transport: "work", address: "alice@example.test"), sourceID: "s", relayID: "r"
        )
        var second = delivery
        second.sequence = 6
        let entries: [JournalEntry] = [.enqueue(delivery, enqueuedAt: Date(), attempts: 0), .enqueue(second, enqueuedAt: Date(), attempts: 0), .seen(transport: "work", deduplicationKey: "u")]
        #expect(PostgresJournalScript.actingTransports(entries) == ["work"])
        // A FAST token moves only with the account's lease: a former owner must not roll it back.
        #expect(PostgresJournalScript.actingTransports([.login(transport: "home", StoredLogin(userAgentID: "ua"))]) == ["home"])
        let sql = PostgresJournalScript(entries, intakeThrough: nil, fence: ("node-a", ["work": 9])).sql
        #expect(sql.hasPrefix("SELECT bridge_fence(E'node-a', ARRAY[E'work']::text[], ARRAY[9]::bigint[]);"))
        #expect(sql.components(separatedBy: "pg_notify").count == 2, "one notice for home")
        #expect(!PostgresJournalScript(entries, intakeThrough: nil).sql.contains("bridge_fence"), "one instance alone: no claims, no notices")
        #expect(sql.contains("E'node-a home'"), "the notice names its instance")
        #expect(PostgresJournalScript.target(of: "node-b home", heardBy: "node-a") == "home")
        #expect(PostgresJournalScript.target(of: "node-a home", heardBy: "node-a") == nil, "its own: its worker has the rows")
        #expect(PostgresJournalScript.target(of: "node-b two words", heardBy: "node-a") == "two words")
    }
}
