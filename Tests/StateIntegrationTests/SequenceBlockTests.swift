import Foundation
import IntegrationSupport
import Logging
import TestServers
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// Blocks of queue sequences for instances sharing one queue (issue 26).
    @Suite("Sequence blocks (PostgreSQL)", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct SequenceBlockTests {
        @Test("each block starts past every sequence stored or reserved before, so instances never number two deliveries alike")
        func disjointBlocks() async throws {
            let database = try await SharedPostgres.freshDatabase()
            let url = database.url, password = database.password
            let blocks = try await Subprocess.offThread { () -> [Int64] in
                let store = try PostgresStateStore(url: url, password: password)
                let stored = try store.enqueue([Delivery(
                    channel: "c", target: Endpoint(transport: "home", address: "bob@example.test"), body: "b", originalBody: "b", nick: "n",
                    type: .chat, source: Endpoint(transport: "work", address: "alice@example.test"), sourceID: "s", relayID: "r"
                )])
                let first = try store.reserveSequences(1_000)
                let second = try store.reserveSequences(1_000)
                return [stored[0].sequence, first, second, try store.lastSequence()]
            }
            #expect(blocks[1] > blocks[0], "past what is stored")
            #expect(blocks[2] >= blocks[1] + 1_000, "the second block after the whole first")
            #expect(blocks[3] >= blocks[2] + 999, "a store opened later numbers past both")
        }
    }
}

extension StateIntegration.SequenceBlockTests {
    @Test("a commit for a transport whose lease is no longer held here leaves out its session state and what its messages made; what others made goes in")
    func staleSourceLeftOut() async throws {
        let database = try await SharedPostgres.freshDatabase()
        let url = database.url, password = database.password
        let book = LeaseBook(instance: "node-a", logger: Logger(label: "test"))
        book.leased = ["work"]  // leased, and no grant here: stale
        let (queued, seen) = try await Subprocess.offThread { () -> ([String], [String: [String]]) in
            let store = try PostgresStateStore(url: url, password: password, leases: book)
            var fromWeb = withSequence(delivery(2), 2)
            fromWeb.source = Endpoint(transport: "web")
            try store.apply([
                .seen(transport: "work", deduplicationKey: "u-1"),
                .enqueue(withSequence(delivery(1), 1), enqueuedAt: Date(), attempts: 0),
                .enqueue(fromWeb, enqueuedAt: Date(), attempts: 0),
            ], intakeThrough: nil)
            return (try store.loadQueue().map(\.sourceTransport), try store.seenDeduplicationKeys(limit: 10))
        }
        #expect(queued == ["web"], "work's message's delivery left out; the HTTP ingress's in")
        #expect(seen["work"] == nil)
    }
}
