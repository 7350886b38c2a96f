import Foundation
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// Rich messages through the relay pipeline and the state database (issue 12): a
/// correction is mapped through the committed id map and its content survives a restart in
/// the queue; a receipt is passed back to the original sender; a split message keeps its
/// operation on the first part only.
@Suite("Rich messages through the relay pipeline")
struct RichPipelineTests {
    let folder = try! TemporaryFolder()
    static let alice = Endpoint(transport: "work", address: "alice@example.org")
    static let bob = Endpoint(transport: "home", address: "bob@example.net")
    static let link = RelayChannel(
        name: "link", members: [ChannelMember(endpoint: alice, direction: .inout), ChannelMember(endpoint: bob, direction: .inout)], format: "{body}",
        passesReceipts: true
    )

    func pipeline(_ store: SQLiteStateStore, _ journal: Journal) -> RelayPipeline<ManualClock> {
        RelayPipeline(
            router: Router(channels: [Self.link], ownJIDs: []), journal: journal, ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test",
            clock: ManualClock(), logger: Logger(label: "pipeline-test"), finish: {}
        )
    }

    static func message(_ body: String?, id: String, from source: Endpoint = alice, _ content: MessageContent = MessageContent()) -> InboundMessage {
        var message = InboundMessage(source: source, sender: "\(source.address ?? "")/phone", nick: "n", id: id, body: body)
        message.content = content
        return message
    }

    @Test("a correction sent right after its original is mapped to bob's copy, and the queued correction survives a restart")
    func correctionSurvivesRestart() async throws {
        let path = self.folder.path("state.sqlite")
        do {
            let store = try SQLiteStateStore(path: path)
            let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
            let pipeline = self.pipeline(store, journal)
            try await pipeline.load(from: store)
            var original = Self.message("helo", id: "a-1")
            original.awaitsCommit = false
            #expect(await pipeline.handle(.message(original), from: "work") == .accepted)
            // No barrier between them: the lookup waits for the original's commit itself.
            #expect(await pipeline.handle(.message(Self.message("hello", id: "a-2", MessageContent(replaceID: "a-1"))), from: "work") == .accepted)
            await journal.flushed()
        }
        let store = try SQLiteStateStore(path: path)
        let queued = try store.loadQueue().map(\.delivery)
        #expect(queued.map(\.body) == ["helo", "hello"])
        #expect(queued.last?.content == MessageContent(replaceID: queued.first?.relayID))
    }

    @Test("bob's receipt for his copy goes back to alice under her id; none when the channel does not pass receipts")
    func receiptPassedBack() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = self.pipeline(store, journal)
        try await pipeline.load(from: store)
        #expect(await pipeline.handle(.message(Self.message("ping", id: "a-1")), from: "work") == .accepted)
        let copy = try #require(try store.relays(forSource: "work", address: Self.alice.address, id: "a-1").first)
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: copy.relayID, from: Self.bob, displayed: true)), from: "home")
        await journal.flushed()
        let queued = try store.loadQueue().map(\.delivery)
        let back = try #require(queued.first { $0.target == Self.alice })
        #expect(back.content == MessageContent(receiptFor: "a-1", receiptDisplayed: true))
        #expect(back.body.isEmpty)

        var quiet = Self.link
        quiet.passesReceipts = false
        await pipeline.update(router: Router(channels: [quiet], ownJIDs: []))
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: copy.relayID, from: Self.bob, displayed: false)), from: "home")
        await journal.flushed()
        #expect(try store.loadQueue().filter { $0.delivery.target == Self.alice }.count == 1)
    }

    @Test("bob cannot correct or retract alice's message through his copy; he can react to it, also after his receipt went back")
    func onlyTheAuthorEdits() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = self.pipeline(store, journal)
        try await pipeline.load(from: store)
        #expect(await pipeline.handle(.message(Self.message("mine", id: "a-1")), from: "work") == .accepted)
        let copy = try #require(try store.relays(forSource: "work", address: Self.alice.address, id: "a-1").first)
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: copy.relayID, from: Self.bob, displayed: false)), from: "home")
        // The same receipt again (another of bob's devices): passed back once.
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: copy.relayID, from: Self.bob, displayed: false)), from: "home")
        _ = await pipeline.handle(.message(Self.message("forged", id: "b-1", from: Self.bob, MessageContent(replaceID: copy.relayID))), from: "home")
        _ = await pipeline.handle(.message(Self.message(nil, id: "b-2", from: Self.bob, MessageContent(retractID: copy.relayID))), from: "home")
        _ = await pipeline.handle(.message(Self.message(nil, id: "b-3", from: Self.bob, MessageContent(reactionTo: copy.relayID, reactions: ["👍"]))), from: "home")
        await journal.flushed()
        let toAlice = try store.loadQueue().map(\.delivery).filter { $0.target == Self.alice }
        #expect(toAlice.map(\.content) == [
            MessageContent(receiptFor: "a-1"),
            MessageContent(),
            MessageContent(reactionTo: "a-1", reactions: ["👍"]),
        ])
        #expect(toAlice.dropFirst().first?.body == "[correction] forged", "not a correction of alice's message")
    }

    @Test("a split correction corrects with its first part; the other parts are plain")
    func splitKeepsOperationOnFirstPart() {
        let delivery = Delivery(
            channel: "link", target: Self.bob, body: String(repeating: "line\n", count: 400), originalBody: "", nick: "n", type: .chat,
            source: Self.alice, sourceID: "a-2", relayID: "r-2", content: MessageContent(replaceID: "r-1")
        )
        let parts = DeliverySplitter.split(delivery, maxStanzaBytes: 1_200)
        #expect(parts.count > 1)
        #expect(parts.first?.content == MessageContent(replaceID: "r-1"))
        #expect(parts.dropFirst().allSatisfy { $0.content.isEmpty })
    }
}
