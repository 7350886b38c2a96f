import Foundation
import IntegrationSupport
import TestServers
import Testing

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// Lease rows against a real PostgreSQL the test starts (issue 26): one owner at a time,
    /// a new epoch at each grant, renewals and the fencing check refused once another instance
    /// took over, heartbeats. Expiry uses a ttl of zero (expired at the next statement), never
    /// a wait.
    @Suite("Lease rows (PostgreSQL)", .enabled(if: IntegrationEnvironment.postgresEnabled))
    struct LeaseTableTests {
        let a: LeaseTable
        let b: LeaseTable

        /// Two instances' tables on a database of the test's own.
        init() async throws {
            let database = try await SharedPostgres.freshDatabase()
            self.a = LeaseTable(connection: try PostgresConnection(url: database.url, password: database.password, applicationName: "node-a"))
            self.b = LeaseTable(connection: try PostgresConnection(url: database.url, password: database.password, applicationName: "node-b"))
            try self.a.createSchema()
            try self.b.createSchema()
        }

        @Test("one owner at a time: the holder renews and passes the fencing check; the other is refused until it expires")
        func oneOwnerAtATime() throws {
            let epoch = try #require(try self.a.acquire("account:work", owner: "node-a", ttl: .seconds(60)))
            #expect(try self.b.acquire("account:work", owner: "node-b", ttl: .seconds(60)) == nil)
            #expect(try self.a.renew("account:work", owner: "node-a", epoch: epoch, ttl: .seconds(60)))
            #expect(try self.a.holds("account:work", owner: "node-a", epoch: epoch))
            #expect(try !self.b.holds("account:work", owner: "node-b", epoch: epoch))
            #expect(try self.a.owners() == ["account:work": "node-a"])
            #expect(try self.a.acquire("account:work", owner: "node-a", ttl: .seconds(60)) == nil, "not even its own name while it runs: a restarted process waits")
            #expect(try !self.a.holds("account:work", owner: "node-a", epoch: epoch + 1), "the right owner with another epoch")
            try self.b.release("account:work", owner: "node-b", epoch: epoch)
            #expect(try self.a.holds("account:work", owner: "node-a", epoch: epoch), "a release by another changes nothing")
        }

        @Test("an expired lease nobody took is not renewed: its owner fences, then asks again for a new epoch")
        func expiredIsNotRenewed() throws {
            let old = try #require(try self.a.acquire("gateway:home", owner: "node-a", ttl: .zero))
            #expect(try !self.a.renew("gateway:home", owner: "node-a", epoch: old, ttl: .seconds(60)))
            #expect(try self.a.acquire("gateway:home", owner: "node-a", ttl: .seconds(60)) == old + 1)
        }

        @Test("expired: another instance takes it with a higher epoch; the old owner's renewal and fencing check are refused")
        func takeoverFencesTheOldOwner() throws {
            let old = try #require(try self.a.acquire("account:work", owner: "node-a", ttl: .zero))
            let new = try #require(try self.b.acquire("account:work", owner: "node-b", ttl: .seconds(60)))
            #expect(new > old)
            #expect(try !self.a.renew("account:work", owner: "node-a", epoch: old, ttl: .seconds(60)))
            #expect(try !self.a.holds("account:work", owner: "node-a", epoch: old))
            #expect(try self.b.holds("account:work", owner: "node-b", epoch: new))
        }

        @Test("a released lease is free at once and keeps counting epochs; the same owner taking it again gets a new one")
        func releaseKeepsTheEpoch() throws {
            let first = try #require(try self.a.acquire("local:fifo", owner: "node-a", ttl: .seconds(60)))
            try self.a.release("local:fifo", owner: "node-a", epoch: first)
            #expect(try self.a.owners().isEmpty)
            let second = try #require(try self.b.acquire("local:fifo", owner: "node-b", ttl: .seconds(60)))
            #expect(second == first + 1)
            try self.b.release("local:fifo", owner: "node-b", epoch: second)
            let third = try #require(try self.b.acquire("local:fifo", owner: "node-b", ttl: .seconds(60)))
            #expect(third == second + 1)
            #expect(try !self.b.holds("local:fifo", owner: "node-b", epoch: second), "an old epoch of the same owner is fenced too")
        }

        @Test("two instances creating the schema at the same moment on an empty database both succeed, ten times over")
        func schemaCreatedConcurrently() async throws {
            for _ in 0..<10 {
                try self.a.connection.execute("DROP TABLE IF EXISTS leases, instances")
                let a = Handoff(table: self.a)
                let b = Handoff(table: self.b)
                async let first: Void = Self.create(a)
                async let second: Void = Self.create(b)
                _ = try await (first, second)
                #expect(try self.a.owners().isEmpty)
            }
        }

        /// A table handed to one other thread, which alone uses its connection until it is done.
        struct Handoff: @unchecked Sendable {
            let table: LeaseTable
        }

        /// `createSchema` on a thread of its own (it blocks).
        static func create(_ handoff: Handoff) async throws {
            try await Subprocess.offThread { try handoff.table.createSchema() }
        }

        @Test("several resources in one statement: the free ones are taken with epochs, running ones left; renewals answer per resource")
        func batches() throws {
            let mine = try #require(try self.b.acquire("work", owner: "node-b", ttl: .seconds(60)))
            let taken = try self.a.acquire(["work", "home", "quote \"and\\ back"], owner: "node-a", ttl: .seconds(60))
            #expect(Set(taken.keys) == ["home", "quote \"and\\ back"], "work runs for node-b")
            #expect(try self.a.owners() == ["work": "node-b", "home": "node-a", "quote \"and\\ back": "node-a"])
            #expect(taken.values.allSatisfy { $0.formerOwnerSilence == nil }, "nobody held them before")
            var claims = taken.mapValues(\.epoch)
            claims["work"] = mine
            #expect(try self.a.renew(claims, owner: "node-a", ttl: .seconds(60)) == Set(taken.keys), "not node-b's lease")
            #expect(try self.a.renew([:], owner: "node-a", ttl: .seconds(60)).isEmpty)
            // Taken over after a release: how long ago node-a last renewed it.
            try self.a.release("home", owner: "node-a", epoch: claims["home"]!)
            let after = try #require(try self.b.acquire(["home"], owner: "node-b", ttl: .seconds(60))["home"])
            let silence = try #require(after.formerOwnerSilence)
            #expect(after.epoch == claims["home"]! + 1 && silence >= .zero && silence < .seconds(60), "\(after)")
        }

        @Test("bridge_fence passes for the holder's epochs and fails with SQLSTATE XB001 for an old epoch or another owner; the refused transaction commits nothing")
        func fenceFunction() throws {
            let epoch = try #require(try self.a.acquire("work", owner: "node-a", ttl: .seconds(60)))
            let check = { (owner: String, epoch: Int64) in
                "SELECT bridge_fence('\(owner)', ARRAY['work']::text[], ARRAY[\(epoch)]::bigint[]); INSERT INTO instances VALUES ('marker-\(owner)-\(epoch)', now());"
            }
            try self.a.connection.run(script: check("node-a", epoch))
            for (owner, claimed) in [("node-a", epoch - 1), ("node-b", epoch)] {
                #expect {
                    try self.b.connection.run(script: check(owner, claimed))
                } throws: { error in
                    (error as? PostgresError)?.sqlState == StateStoreError.fencedState
                }
            }
            #expect(try self.a.connection.execute("SELECT name FROM instances ORDER BY name") == [["marker-node-a-\(epoch)"]])
        }

        @Test("heartbeats: live instances are those heard from within the window")
        func heartbeats() throws {
            try self.a.heartbeat("node-a")
            try self.b.heartbeat("node-b")
            #expect(try self.a.liveInstances(within: .seconds(60)) == ["node-a", "node-b"])
            // node-b last heard from an hour ago.
            try self.a.connection.execute("UPDATE instances SET heartbeat_at = now() - interval '1 hour' WHERE name = 'node-b'")
            #expect(try self.a.liveInstances(within: .seconds(60)) == ["node-a"])
            try self.b.heartbeat("node-b")
            #expect(try self.a.liveInstances(within: .seconds(60)) == ["node-a", "node-b"])
            #expect(LeaseTable.interval(.milliseconds(1_500)) == "1500000 microseconds")
        }
    }
}
