import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// The hop list in docs/design.md ("Threads") (issue 21): a message from one account to another goes from the
/// source's intake to the target's write on the accounts' event loop, and no journal
/// commit (the journal's thread) sits in between when the intake log takes it.
@Suite("relay hops")
struct RelayHopTests {
    /// Records, for each batch it is handed, whether it runs on the loop and how many
    /// commits the journal had made by then.
    final class LoopTransport: Transport, Sendable {
        let name = "home"
        let loop: any EventLoop
        /// The loop's executor, as an account's transport names its own: the worker's
        /// drain runs there.
        let executor: (any TaskExecutor)?
        let commits: @Sendable () -> Int
        let batches: AsyncStream<(onLoop: Bool, commits: Int)>
        private let sink: AsyncStream<(onLoop: Bool, commits: Int)>.Continuation

        init(loop: any EventLoop, commits: @escaping @Sendable () -> Int) {
            self.loop = loop
            self.executor = EventLoopTaskExecutor(loop)
            self.commits = commits
            (self.batches, self.sink) = AsyncStream.makeStream()
        }

        func run() async throws { try? await gracefulShutdown() }
        func stop() async {}

        func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
            self.sink.yield((self.loop.inEventLoop, self.commits()))
            return deliveries.map { _ in .delivered }
        }
    }

    /// Relays one message from `work` to `home` with every task preferring one loop;
    /// returns what the target saw.
    static func relayOne(withIntakeLog: Bool) async throws -> (onLoop: Bool, commits: Int) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let folder = try TemporaryFolder()
        let store = try SQLiteStateStore(path: folder.path("state.sqlite"))
        let log = withIntakeLog ? try IntakeLogFile(path: folder.path("state.intake")) : nil
        // A manual clock that is never advanced: the log's own commit cannot come first.
        let journal = try Journal(store: store, log: log, clock: ManualClock(), logger: Logger(label: "hops"))
        let pipeline = RelayPipeline(
            router: Router(channels: [RelayPipelineTests.channel], ownJIDs: ["work@a.example", "home@b.example"]), journal: journal, ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test", clock: ManualClock(), logger: Logger(label: "hops"), finish: {}
        )
        try await pipeline.load(from: store)
        let home = LoopTransport(loop: loop) { journal.commitCount }
        let worker = pipeline.makeWorker(for: home, configuration: .init(batchSize: 10, maxAttempts: 3))
        await pipeline.add(worker)
        let running = Task { try await worker.run() }
        _ = await pipeline.handle(.available, from: "home")
        let outcome = await Task(executorPreference: executor) {
            await pipeline.handle(.message(RelayPipelineTests.message("hi", id: "src-1")), from: "work")
        }.value
        #expect(outcome == .accepted)
        var batches = home.batches.makeAsyncIterator()
        let seen = try #require(await batches.next())
        running.cancel()
        await journal.shutdown()
        try await group.shutdownGracefully()
        return seen
    }

    @Test("with the intake log: intake to write on the loop, before any commit")
    func noHopWithTheIntakeLog() async throws {
        let seen = try await Self.relayOne(withIntakeLog: true)
        #expect(seen.onLoop)
        #expect(seen.commits == 0)
    }

    @Test("without it: the commit on the journal's thread comes first (the hop there and back)")
    func commitHopWithoutTheLog() async throws {
        let seen = try await Self.relayOne(withIntakeLog: false)
        #expect(seen.onLoop)
        #expect(seen.commits >= 1)
    }
}
