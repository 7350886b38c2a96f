import Foundation
import Logging
import NIOPosix
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// Building an account's transport from the stored state.
@Suite("TransportFactory")
struct TransportFactoryTests {
    struct Unreadable: Error {}

    /// An event handler that takes nothing: the transport is never started here.
    struct NoHandler: TransportEventHandler {
        func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome { .accepted }
    }

    static func factory(resumePoints: @escaping @Sendable (String) throws -> StoredStartingPoint, in folder: String) throws -> TransportFactory {
        var factory = TransportFactory(group: MultiThreadedEventLoopGroup.singleton, bridgeID: "test", logger: Logger(label: "test"))
        factory.journal = try Journal(store: try SQLiteStateStore.inMemory(), logger: Logger(label: "test"))
        factory.ledgers = try StreamLedgers(folder: folder)
        factory.storedStartingPoint = resumePoints
        return factory
    }

    static func account() throws -> AccountConfiguration {
        AccountConfiguration(
            name: "work", client: XMPPClientConfiguration(jid: try JID("work@example.test")), password: .registered("pw"), subscriptionPolicy: .acceptKnown
        )
    }

    @Test("an account whose archive cursor cannot be read is not started (a session without it would skip what the archive holds since), and is once it can")
    func unreadableResumePointStopsTheAccount() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("factory-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let refusing = try Self.factory(resumePoints: { _ in throw Unreadable() }, in: folder)
        #expect(throws: Unreadable.self) { _ = try refusing.make(account: try Self.account(), handler: NoHandler()) }
        let reading = try Self.factory(resumePoints: { StoredStartingPoint(resumePoint: $0 == "work" ? "since:0" : nil) }, in: folder)
        #expect(try reading.make(account: try Self.account(), handler: NoHandler()).name == "work")
    }
}
