import Foundation
import Logging
import Testing
import TestSupport
import TransportCore
import Transports

@testable import Bridge

/// WAL checkpoints off the commit path (issue 8: a checkpoint inside a commit stalled
/// deliveries): with automatic checkpoints off, the journal's commits stay in the WAL until
/// the checkpointer copies them into the database file, on its own thread.
@Suite("WAL checkpointer")
struct WALCheckpointerTests {
    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    static func delivery(_ index: Int) -> Delivery {
        Delivery(
            channel: "c", target: Endpoint(transport: "home", address: "bob@b.example"), body: String(repeating: "x", count: 2_000),
            originalBody: "m\(index)", nick: "a", type: .chat, source: Endpoint(transport: "work", address: "alice@a.example"),
            sourceID: "s\(index)", relayID: "r\(index)"
        )
    }

    /// Commits 300 deliveries (about 1 MB) one transaction each; returns the database file's
    /// size before and after, and whether all 300 read back.
    static func run(checkpointer: Bool) async throws -> (before: Int, after: Int, readBack: Int) {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try StateStore(path: path, manualCheckpoints: true)
        let before = Self.fileSize(path)
        let journal = try Journal(
            store: store, checkpointer: checkpointer ? try WALCheckpointer(path: path, interval: 10, logger: Logger(label: "test")) : nil,
            logger: Logger(label: "test")
        )
        for index in 1...300 {
            guard let sequence = journal.assignSequences(1)?.lowerBound else { continue }
            var delivery = Self.delivery(index)
            delivery.sequence = sequence
            try await journal.commit([.enqueue(delivery, enqueuedAt: Date(), attempts: 0)])
        }
        await journal.shutdown()
        return (before, Self.fileSize(path), try store.pendingCount(transport: "home"))
    }

    @Test("with the checkpointer the database file takes the commits; without it they stay in the WAL; nothing is lost either way")
    func checkpoints() async throws {
        let with = try await Self.run(checkpointer: true)
        #expect(with.readBack == 300)
        #expect(with.after > with.before + 500_000, "database file \(with.before) → \(with.after) bytes")
        let without = try await Self.run(checkpointer: false)
        #expect(without.readBack == 300)
        #expect(without.after < without.before + 100_000, "database file \(without.before) → \(without.after) bytes")
    }
}
