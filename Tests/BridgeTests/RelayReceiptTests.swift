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

/// Receipts (XEP-0184) and displayed markers (XEP-0333) through the pipeline: recorded
/// only from the JID the copy went to, never from a room (any occupant could send one).
@Suite("Receipts through the relay pipeline")
struct RelayReceiptTests {
    let folder = try! TemporaryFolder()
    static let contact = Endpoint(transport: "work", address: "oncall@example.org")
    static let room = Endpoint(transport: "work", address: "ops@muc.example.org")
    static let channel = RelayChannel(
        name: "alerts",
        members: [
            ChannelMember(endpoint: Endpoint(transport: "web"), direction: .in),
            ChannelMember(endpoint: Self.contact, direction: .out),
            ChannelMember(endpoint: Self.room, direction: .out, room: RoomMembership(nick: "bridge")),
        ]
    )

    @Test("a receipt from the contact is recorded; one from the room's JID, or from a stranger, is not")
    func receiptsOnlyFromTheRecipient() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = RelayPipeline(
            router: Router(channels: [Self.channel], ownJIDs: ["bridge@example.org"]), journal: journal, ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test", clock: ManualClock(), logger: Logger(label: "pipeline-test"), finish: {}
        )
        try await pipeline.load(from: store)
        let message = InboundMessage(source: Endpoint(transport: "web"), sender: "web", nick: "web", id: "web-1", body: "disk full", channel: "alerts")
        #expect(await pipeline.handle(.message(message), from: "web") == .accepted)
        let copies = try store.relays(forSource: "web", address: nil, id: "web-1")
        let toContact = try #require(copies.first { $0.target == Self.contact })
        let toRoom = try #require(copies.first { $0.target == Self.room })

        for (relayID, from) in [(toRoom.relayID, Self.room), (toContact.relayID, Endpoint(transport: "work", address: "mallory@example.org"))] {
            _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: relayID, from: from, displayed: true)), from: "work")
        }
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: toContact.relayID, from: Self.contact, displayed: false)), from: "work")
        await journal.flushed()
        let after = try store.relays(forSource: "web", address: nil, id: "web-1")
        let contact = try #require(after.first { $0.target == Self.contact })
        let room = try #require(after.first { $0.target == Self.room })
        #expect(contact.receivedAt != nil)
        #expect(contact.displayedAt == nil)
        #expect(room.receivedAt == nil && room.displayedAt == nil)
    }
}
