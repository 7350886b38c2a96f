import Foundation
import Logging
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

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

    /// Commits `commits` deliveries (300: about 1 MB) one transaction each; returns the database
    /// file's size before and after, the WAL's largest size seen after a commit, and how many
    /// read back.
    static func run(checkpointer: Bool, restartFrames: Int = 1_024, commits: Int = 300) async throws -> (before: Int, after: Int, largestWAL: Int, readBack: Int) {
        let folder = try TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteStateStore(path: path, manualCheckpoints: true)
        let before = Self.fileSize(path)
        var largestWAL = 0
        let journal = try Journal(
            store: store,
            checkpointer: checkpointer ? try WALCheckpointer(path: path, interval: 10, restartFrames: restartFrames, logger: Logger(label: "test")) : nil,
            logger: Logger(label: "test")
        )
        for index in 1...commits {
            guard let sequence = journal.assignSequences(1)?.lowerBound else { continue }
            var delivery = Self.delivery(index)
            delivery.sequence = sequence
            try await journal.commit([.enqueue(delivery, enqueuedAt: Date(), attempts: 0)])
            largestWAL = max(largestWAL, Self.fileSize(path + "-wal"))
        }
        await journal.shutdown()
        return (before, Self.fileSize(path), largestWAL, try store.pendingCount(transport: "home"))
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

    @Test("a WAL that stays long after a passive checkpoint is made to start over: under steady commits it no longer grows without end")
    func restarts() async throws {
        // Each delivery is about half a frame; 300 commits write over a thousand frames.
        // PASSIVE checkpoints alone left the WAL as long as no checkpoints at all on an idle
        // machine (9 MB both), and kept it shorter only when the machine was busy enough to
        // space the commits out: the bar is the WAL without checkpoints. 600 commits: the
        // WAL without checkpoints grows with them, the one made to start over does not, so a
        // checkpointer thread a loaded machine runs late (at 300, one run in a dozen beside a
        // build) still stays well under the bar.
        let unbounded = try await Self.run(checkpointer: false, commits: 600)
        let bounded = try await Self.run(checkpointer: true, restartFrames: 16, commits: 600)
        #expect(bounded.readBack == 600)
        #expect(bounded.largestWAL * 4 < unbounded.largestWAL, "largest WAL \(bounded.largestWAL) bytes, \(unbounded.largestWAL) without checkpoints")
    }
}
