import Foundation
import Logging
import Testing
import TransportCore
import XMPP

@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// The relay path's stages as values (issue 40), composed in order over one message
/// without the pipeline, its journal or any transport.
@Suite("Relay stages")
struct RelayStageTests {
    static let alice = Endpoint(transport: "work", address: "alice@example.org")
    static let bob = Endpoint(transport: "home", address: "bob@example.net")

    static var router: Router {
        var channel = RelayChannel(
            name: "link", members: [ChannelMember(endpoint: alice, direction: .inout), ChannelMember(endpoint: bob, direction: .inout)], format: "{body}"
        )
        channel.archives = true
        return Router(channels: [channel], ownJIDs: [])
    }

    static func message(_ body: String, key: String? = nil, from source: Endpoint = alice) -> InboundMessage {
        InboundMessage(source: source, sender: source.address ?? "", nick: "alice", id: "m-\(body.count)", body: body, deduplicationKey: key)
    }

    /// Runs `stages` in order until one stops the message.
    static func run(_ stages: inout [any RelayStage], _ work: inout RelayWork) -> StageOutcome {
        for index in stages.indices {
            if case .stop(let reason) = stages[index].run(&work) { return .stop(reason) }
        }
        return .next
    }

    @Test("repeat check, routing, splitting and archiving in order: one routed copy, split to the target's limit, its key and its archive entry in the bookkeeping; the same key again stops at the first stage")
    func composedInOrder() {
        var splitting = SplitStage(logger: Logger(label: "stages"))
        splitting.limits["home"] = 400
        var stages: [any RelayStage] = [RepeatCheck(window: 10), RoutingStage(router: Self.router, ids: StanzaIDGenerator(prefix: "r")), splitting, ArchiveStage()]
        let text = String(repeating: "word ", count: 200)
        var work = RelayWork(message: Self.message(text, key: "k1"), router: Self.router, now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(Self.run(&stages, &work) == .next)
        #expect(work.routed.map(\.target) == [Self.bob])
        #expect(work.deliveries.count > 1, "a 1,000-byte body split to a 400-byte stanza limit")
        #expect(work.deliveries.allSatisfy { $0.target == Self.bob })
        let kinds = work.bookkeeping.map { entry -> String in
            switch entry {
            case .seen: "seen"
            case .archive: "archive"
            default: "other"
            }
        }
        #expect(kinds == ["seen", "archive"])

        var again = RelayWork(message: Self.message(text, key: "k1"), router: Self.router, now: Date())
        #expect(Self.run(&stages, &again) == .stop(.alreadyHandled))
        #expect(again.routed.isEmpty && again.bookkeeping.isEmpty)
    }

    @Test("routing stops a stranger's message with the router's reason and routes nothing")
    func strangerStops() {
        var routing = RoutingStage(router: Self.router, ids: StanzaIDGenerator(prefix: "r"))
        var work = RelayWork(message: Self.message("hi", from: Endpoint(transport: "work", address: "mallory@example.org")), router: Self.router, now: Date())
        guard case .stop(let reason) = routing.run(&work) else {
            Issue.record("a stranger's message was routed")
            return
        }
        #expect(reason != nil)
        #expect(work.routed.isEmpty)
    }

    @Test("splitting leaves a delivery under its limit, or to a transport without one, as it is")
    func splitLeavesSmallOnesAlone() {
        var splitting = SplitStage(logger: Logger(label: "stages"))
        splitting.limits["home"] = 10_000
        var routing = RoutingStage(router: Self.router, ids: StanzaIDGenerator(prefix: "r"))
        var work = RelayWork(message: Self.message("short"), router: Self.router, now: Date())
        _ = routing.run(&work)
        _ = splitting.run(&work)
        #expect(work.deliveries == work.routed)
    }
}
