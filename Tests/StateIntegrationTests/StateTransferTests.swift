import Foundation
import IntegrationSupport
import LocalArchive
import TestServers
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// `xmpp-bridge state migrate` (issue 26): a SQLite state copied into PostgreSQL reads
    /// back the same through the store's interface, and goes on from where it was.
    @Suite("state migrate", .enabled(if: StateBackend.available.contains(.postgresql)))
    struct StateTransferTests {
        static let at = Date(timeIntervalSince1970: 1_800_000_000)

        /// A SQLite state with something in every table the transfer copies.
        static func filledSQLite() async throws -> SQLiteStateStore {
            let store = try await StateFixture(.sqlite).open() as! SQLiteStateStore
            let bob = Endpoint(transport: "home", address: "bob@b.example")
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: bob, direction: .out))
            try store.removeRoute(channel: "ops", endpoint: Endpoint(transport: "stdin"))
            let deliveries = (1...4).map { withSequence(delivery($0), Int64($0)) }
            let session = StoredStreamSession(id: "s-1", location: "127.0.0.1:5222", handled: 7, acknowledged: 2, unacknowledgedIDs: ["r-3"], jid: "home@b.example/x")
            try store.apply([
                .enqueue(deliveries[0], enqueuedAt: Self.at, attempts: 0),
                .enqueue(deliveries[1], enqueuedAt: Self.at, attempts: 2),
                .enqueue(deliveries[2], enqueuedAt: Self.at, attempts: 0),
                .complete(sequence: 3),
                .deadLetter(deliveries[3], enqueuedAt: Self.at, attempts: 5, reason: "gave up"),
                .streamSession(transport: "home", session),
                .resumePoint(key: "work", position: "archive-id-9"),
                .seen(transport: "work", deduplicationKey: "u-1"),
                .seen(transport: "work", deduplicationKey: "u-2 'quoted'"),
                .notificationAccepted(key: "group/firing", id: "m-1", at: Self.at),
                .archive(ArchivedMessage(at: Self.at, channel: "ops", source: bob, sender: "bob@b.example/x", nick: "bob", sourceID: "b-1", body: "déjà vu, tout ça")),
                .archive(ArchivedMessage(at: Self.at.addingTimeInterval(1), channel: "ops", source: bob, sender: "bob@b.example/x", nick: "bob", sourceID: "b-2", body: "second")),
                .omemo(account: "home", OMEMOStateContractTests.changes),
                .login(
                    transport: "home",
                    StoredLogin(userAgentID: "ua-1", token: .init(secret: "secret-token:fast-1", mechanism: "HT-SHA-256-EXPR", expiry: Self.at, passwordCheck: "c"))
                ),
            ], intakeThrough: nil)
            try store.saveGatewayRegistration(GatewayRegistrationRecord(gateway: "home", user: "dave@work.example", address: "erin@home.example", password: "pw", registeredAt: Self.at))
            return store
        }

        @Test("round trip: routes, queue, dead letters, id map, stream sessions, resume points, deduplication keys, notifications, registrations, OMEMO devices and the archive read back the same; sequences and archive ids go on past the copied ones; a second migrate into it is refused")
        func roundTrip() async throws {
            let sqlite = try await Self.filledSQLite()
            let database = try await SharedPostgres.freshDatabase()
            let summary = try await Subprocess.offThread { () throws -> StateTransfer.Summary in
                let target = try PostgresStateStore(url: database.url, password: database.password)
                return try StateTransfer(source: sqlite, target: try target.connect(purpose: "test")).run()
            }
            let counts = Dictionary(uniqueKeysWithValues: summary.map { ($0.table, $0.rows) })
            #expect(counts["queue"] == 2 && counts["dead_letters"] == 1 && counts["archive"] == 2 && counts["routes"] == 2, "\(summary)")
            let postgres = try await StateFixture.open(url: database.url, password: database.password)

            #expect(try postgres.routes() == sqlite.routes())
            #expect(try postgres.loadQueue() == sqlite.loadQueue())
            #expect(try postgres.deadLetters(transport: nil) == sqlite.deadLetters(transport: nil))
            #expect(try postgres.relay("r-3") == sqlite.relay("r-3") && sqlite.relay("r-3") != nil)
            #expect(try postgres.streamSessions() == sqlite.streamSessions())
            #expect(try postgres.logins() == sqlite.logins() && sqlite.logins()["home"]?.token != nil)
            #expect(try postgres.resumePoints() == sqlite.resumePoints())
            #expect(try postgres.seenDeduplicationKeys(limit: 10) == sqlite.seenDeduplicationKeys(limit: 10))
            #expect(try postgres.acceptedNotifications(since: .distantPast).map(\.key) == ["group/firing"])
            #expect(try postgres.gatewayRegistrations() == sqlite.gatewayRegistrations())
            // The OMEMO device as it was (issue 41): the same id, keys, sessions, trust and lists.
            #expect(try postgres.omemoState(account: "home") == sqlite.omemoState(account: "home") && sqlite.omemoState(account: "home") != nil)
            #expect(try postgres.archived(ArchiveQuery()).messages == sqlite.archived(ArchiveQuery()).messages)
            #expect(try postgres.archived(ArchiveQuery(search: "deja")).messages.map(\.sourceID) == ["b-1"], "the words are indexed anew")

            // Going on: new rows number after the copied ones.
            let queued = try postgres.enqueue([delivery(9)])
            #expect(queued.first.map(\.sequence).map { $0 > 4 } == true, "\(queued.map(\.sequence))")
            try postgres.apply([.archive(ArchivedMessage(at: Self.at.addingTimeInterval(2), channel: "ops", source: Endpoint(transport: "home", address: "bob@b.example"), sender: "bob@b.example/x", nick: "bob", sourceID: "b-3", body: "third"))], intakeThrough: nil)
            #expect(try postgres.archived(ArchiveQuery()).messages.count == 3)
            try postgres.apply([.seen(transport: "work", deduplicationKey: "u-3")], intakeThrough: nil)
            #expect(try postgres.seenDeduplicationKeys(limit: 10)["work"] == ["u-1", "u-2 'quoted'", "u-3"], "positions go on past the copied ones")

            #expect {
                try StateTransfer(source: sqlite, target: try (postgres as! PostgresStateStore).connect(purpose: "again")).run()
            } throws: { error in
                guard case .targetNotEmpty(let tables) = error as? StateTransferError else { return false }
                return tables.contains("queue") && tables.contains("routes")
            }
        }
    }
}
