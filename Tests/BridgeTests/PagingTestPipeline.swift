import Foundation
import Logging
import TestSupport
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// A relay pipeline with paging for tests (issue 24): one channel from the local `web` to
/// contacts, its state database, and the ``PagingService`` running on the manual clock,
/// whose wall time is `start` plus the clock's offset. `stop()` ends it like a process.
struct PagingTestPipeline {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 08:00 UTC

    let pipeline: RelayPipeline<ManualClock>
    let journal: Journal
    let store: SQLiteStateStore
    let service: Task<Void, Never>

    static func start(
        path: String, clock: ManualClock, channel: String, members: [Endpoint], policy: PagingPolicy, format: String = RelayChannel.defaultFormat,
        stanzaLimits: [String: Int] = [:]
    ) async throws -> PagingTestPipeline {
        let store = try SQLiteStateStore(path: path)
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let relayChannel = RelayChannel(
            name: channel,
            members: [ChannelMember(endpoint: Endpoint(transport: "web"), direction: .in)] + members.map { ChannelMember(endpoint: $0, direction: .out) },
            format: format
        )
        let pipeline = RelayPipeline(
            router: Router(channels: [relayChannel], ownJIDs: ["bridge@work.example"]), journal: journal, ids: StanzaIDGenerator(prefix: "test-\(UUID().uuidString.prefix(6))"), idPrefix: "test", clock: clock, logger: Logger(label: "pipeline-test"), finish: {}
        )
        try await pipeline.load(from: store)
        // A worker that never runs: what is queued for its transport stays in the queue,
        // and its stanza limit applies.
        for (transport, limit) in stanzaLimits {
            await pipeline.add(pipeline.makeWorker(for: FakeTransport(name: transport), configuration: .init(batchSize: 10, maxAttempts: 3)), stanzaLimit: limit)
        }
        let paging = PagingService(pipeline: pipeline, clock: clock)
        try await pipeline.loadPaging(from: store, policies: [channel: policy], silences: nil, service: paging, now: { Self.start.addingTimeInterval(clock.now.offset.seconds) })
        let service = Task { _ = try? await paging.run() }
        return PagingTestPipeline(pipeline: pipeline, journal: journal, store: store, service: service)
    }

    /// The bodies queued for `target`, in order, once the journal applied what it has.
    func queued(to target: Endpoint) async throws -> [String] {
        await self.journal.flushed()
        return try self.store.loadQueue().filter { $0.delivery.target == target }.map(\.delivery.body)
    }

    func stop() async {
        self.service.cancel()
        await self.service.value
        await self.journal.shutdown()
    }
}
