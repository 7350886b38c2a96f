import Foundation
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay

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

    @Test("an urgent alert's escalation fires after a restart at its time; 'ack' from alice before the next tier stops it and both hear it")
    func escalationSurvivesRestart() async throws {
        let clock = ManualClock()
        let path = self.folder.path("state.sqlite")
        var alert = InboundMessage(source: Endpoint(transport: "web"), sender: "web", nick: "web", id: "web-1", body: "disk full", channel: "oncall")
        alert.priority = 5
        alert.notification = AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: ["f1"], commonLabels: ["alertname": "DiskFull"])
        do {
            let first = try await PagingTestPipeline.start(path: path, clock: clock, channel: "oncall", members: [Self.alice], policy: Self.policy)
            #expect(await first.pipeline.handle(.message(alert), from: "web") == .accepted)
            var replica = alert
            replica.id = "web-2"
            #expect(await first.pipeline.handle(.message(replica), from: "web") == .duplicate(of: "web-1"))
            #expect(try await first.queued(to: Self.alice) == ["[oncall] web: disk full"])
            await first.stop()
        }
        // A new process: the page and its timer come back from the database.
        let bridge = try await PagingTestPipeline.start(path: path, clock: clock, channel: "oncall", members: [Self.alice], policy: Self.policy)
        #expect(try bridge.store.pages(since: Self.start.addingTimeInterval(-60)).map(\.id) == ["web-1"])
        clock.advance(by: .seconds(299))
        #expect(try await bridge.queued(to: Self.bob).isEmpty)
        clock.advance(by: .seconds(1))
        let escalated = await eventually { (try? await bridge.queued(to: Self.bob).count) == 1 }
        #expect(escalated)
        #expect(try await bridge.queued(to: Self.bob).first?.hasPrefix("escalated: not acknowledged by alice@work.example for 5 min\n") == true)
        let page = try #require(await bridge.pipeline.page(source: "web", id: "web-1"))
        #expect(page.escalations.count == 1 && page.ack == nil)

        let ack = InboundMessage(source: Self.alice, sender: "alice@work.example/phone", nick: "alice", id: "a-1", body: "ack")
        #expect(await bridge.pipeline.handle(.message(ack), from: "work") == .accepted)
        #expect(try await bridge.queued(to: Self.alice).last == "acknowledged by alice@work.example")
        #expect(try await bridge.queued(to: Self.bob).last == "acknowledged by alice@work.example")
        let acknowledged = try #require(await bridge.pipeline.page(source: "web", id: "web-1")?.ack)
        #expect(acknowledged.by == "alice@work.example" && acknowledged.how == "command")
        let stored = try bridge.store.pages(since: Self.start.addingTimeInterval(-60)).first { $0.id == "web-1" }
        #expect(stored?.ack == acknowledged)
        await bridge.stop()
    }

    @Test("a page is forgotten a week after it was made: from memory and from the database")
    func pagesArePruned() async throws {
        let clock = ManualClock()
        let bridge = try await PagingTestPipeline.start(path: self.folder.path("state.sqlite"), clock: clock, channel: "oncall", members: [Self.alice], policy: Self.policy)
        var alert = InboundMessage(source: Endpoint(transport: "web"), sender: "web", nick: "web", id: "web-1", body: "disk full", channel: "oncall")
        alert.priority = 2
        #expect(await bridge.pipeline.handle(.message(alert), from: "web") == .accepted)
        #expect(await bridge.pipeline.page(source: "web", id: "web-1") != nil)
        clock.advance(by: .seconds(7 * 86_400))
        let forgotten = await eventually { await bridge.pipeline.page(source: "web", id: "web-1") == nil }
        #expect(forgotten)
        let pruned = await eventually { await bridge.journal.flushed(); return (try? bridge.store.pages(since: .distantPast).isEmpty) == true }
        #expect(pruned)
        await bridge.stop()
    }
}
