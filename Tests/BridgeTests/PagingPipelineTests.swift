import Foundation
import Logging
import Testing
import TestSupport
import TransportCore
import Transports
import XMPP

@testable import Bridge

/// Paging through the relay pipeline (issue 24), with the manual clock: the page is stored
/// with the alert's commit, its escalation timer survives a restart, an "ack" stops it,
/// and a replica's copy of a notification is answered with the first id.
@Suite("Paging through the relay pipeline")
struct PagingPipelineTests {
    let folder = try! TemporaryFolder()
    static let alice = Endpoint(transport: "work", address: "alice@work.example")
    static let bob = Endpoint(transport: "work", address: "bob@work.example")
    static let channel = RelayChannel(
        name: "oncall",
        members: [ChannelMember(endpoint: Endpoint(transport: "web"), direction: .in), ChannelMember(endpoint: Self.alice, direction: .out)]
    )
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static var policy: PagingPolicy {
        var policy = PagingPolicy()
        policy.isPaging = true
        policy.tiers = [PagingPolicy.Tier(after: .seconds(300), to: [Self.bob])]
        return policy
    }

    func pipeline(store: StateStore, clock: ManualClock) async throws -> (RelayPipeline<ManualClock>, Journal) {
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = RelayPipeline(
            router: Router(channels: [Self.channel], ownJIDs: ["bridge@work.example"]), journal: journal, store: store,
            ids: StanzaIDGenerator(prefix: "test-\(UUID().uuidString.prefix(6))"), idPrefix: "test", clock: clock, logger: Logger(label: "pipeline-test"), finish: {}
        )
        try await pipeline.load()
        try await pipeline.loadPaging(policies: ["oncall": Self.policy], silences: nil, now: { Self.start.addingTimeInterval(clock.now.offset.seconds) })
        return (pipeline, journal)
    }

    static func queued(_ store: StateStore, to target: Endpoint) throws -> [String] {
        try store.loadQueue().filter { $0.delivery.target == target }.map(\.delivery.body)
    }

    @Test("an urgent alert's escalation fires after a restart at its time; 'ack' from alice before the next tier stops it and both hear it")
    func escalationSurvivesRestart() async throws {
        let store = try StateStore(path: self.folder.path("state.sqlite"))
        let clock = ManualClock()
        var alert = InboundMessage(source: Endpoint(transport: "web"), sender: "web", nick: "web", id: "web-1", body: "disk full", channel: "oncall")
        alert.priority = 5
        alert.notification = AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: ["f1"], commonLabels: ["alertname": "DiskFull"])
        do {
            let (first, journal) = try await self.pipeline(store: store, clock: clock)
            #expect(await first.handle(.message(alert), from: "web") == .accepted)
            var replica = alert
            replica.id = "web-2"
            #expect(await first.handle(.message(replica), from: "web") == .duplicate(of: "web-1"))
            await journal.shutdown()
        }
        #expect(try Self.queued(store, to: Self.alice) == ["[oncall] web: disk full"])
        // A new process: the page and its timer come back from the database.
        #expect(try store.pages(since: Self.start.addingTimeInterval(-60)).map(\.id) == ["web-1"])
        let (pipeline, journal) = try await self.pipeline(store: store, clock: clock)
        // The first process's timer and this one's.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(299))
        await journal.flushed()
        #expect(try Self.queued(store, to: Self.bob).isEmpty)
        clock.advance(by: .seconds(1))
        let escalated = await eventually { await journal.flushed(); return (try? Self.queued(store, to: Self.bob).count) == 1 }
        #expect(escalated)
        #expect(try Self.queued(store, to: Self.bob).first?.hasPrefix("escalated: not acknowledged by alice@work.example for 5 min\n") == true)
        let page = try #require(await pipeline.page(source: "web", id: "web-1"))
        #expect(page.escalations.count == 1 && page.ack == nil)

        let ack = InboundMessage(source: Self.alice, sender: "alice@work.example/phone", nick: "alice", id: "a-1", body: "ack")
        #expect(await pipeline.handle(.message(ack), from: "work") == .accepted)
        await journal.flushed()
        #expect(try Self.queued(store, to: Self.alice).last == "acknowledged by alice@work.example")
        #expect(try Self.queued(store, to: Self.bob).last == "acknowledged by alice@work.example")
        let acknowledged = try #require(await pipeline.page(source: "web", id: "web-1")?.ack)
        #expect(acknowledged.by == "alice@work.example" && acknowledged.how == "command")
        let stored = try store.pages(since: Self.start.addingTimeInterval(-60)).first { $0.id == "web-1" }
        #expect(stored?.ack == acknowledged)
        await journal.shutdown()
    }
}
