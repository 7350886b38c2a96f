import Foundation
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRouting
@testable import BridgeState

/// Which copies ask their target for a receipt (issue 43, what a relayed message costs the
/// server): those of local inputs and of the bridge's own messages, whose delivery status
/// is kept, and those whose receipt goes back to a sender who asked for one. Any other
/// request, marker and store hint would cost the server on every message for nothing.
@Suite("Receipt requests")
struct ReceiptRequestTests {
    static let alice = Endpoint(transport: "work", address: "alice@x.test")
    static let bob = Endpoint(transport: "home", address: "bob@x.test")
    static let console = Endpoint(transport: "console")

    static func router(receipts: Bool, alice direction: ChannelMember.Direction = .inout) -> Router {
        let members = [
            ChannelMember(endpoint: alice, direction: direction), ChannelMember(endpoint: bob, direction: .inout),
            ChannelMember(endpoint: console, direction: .inout),
        ]
        return Router(channels: [RelayChannel(name: "c", members: members, format: "{body}", passesReceipts: receipts)], ownJIDs: [])
    }

    static func copies(_ router: Router, from source: Endpoint = alice, asking: Bool?) -> [Delivery] {
        var message = InboundMessage(source: source, sender: source.address ?? "console", nick: "Alice", id: "a-1", body: "hi")
        message.content.wantsReceipt = asking
        return RouterTests.deliveries(RouterTests.route(router, message))
    }

    @Test("a sender who asks, in a channel that passes receipts back: the XMPP copy asks too")
    func askedAndPassedBack() {
        let toBob = Self.copies(Self.router(receipts: true), asking: true).filter { $0.target == Self.bob }
        #expect(toBob.map(\.content.wantsReceipt) == [true])
        #expect(toBob.map(\.asksReceipt) == [true])
    }

    @Test("nobody reads the receipt: the sender did not ask, the channel does not pass receipts, or the sender only sends")
    func nobodyReads() {
        for (router, asking) in [(Self.router(receipts: true), false), (Self.router(receipts: true), nil), (Self.router(receipts: false), true),
            (Self.router(receipts: true, alice: .in), true)] as [(Router, Bool?)]
        {
            let toBob = Self.copies(router, asking: asking).filter { $0.target == Self.bob }
            #expect(toBob.count == 1)
            #expect(toBob.allSatisfy { $0.content.wantsReceipt == nil && !$0.asksReceipt }, "\(toBob)")
        }
    }

    @Test("a local input's copies and the bridge's own messages always ask: their delivery status is kept")
    func localAndBridgeMade() {
        let toBob = Self.copies(Self.router(receipts: false), from: Self.console, asking: nil).filter { $0.target == Self.bob }
        #expect(toBob.map(\.asksReceipt) == [true])
        let page = Delivery(
            channel: "c", target: Self.bob, body: "page", originalBody: "page", nick: "xmpp-bridge", type: .chat,
            source: Endpoint(transport: "paging"), sourceID: "p-1", relayID: "p-1"
        )
        #expect(page.asksReceipt)
    }

    @Test("the wish is no content (a plain message stays plain), the queue keeps it, the archive drops it")
    func storage() {
        let wish = MessageContent(wantsReceipt: true)
        #expect(wish.isEmpty)
        #expect(wish.withoutReceiptWish == MessageContent())
        #expect(MessageContentColumn.decode(MessageContentColumn.encode(wish)) == wish)
        #expect(MessageContentColumn.encode(MessageContent()) == nil)
        let rich = MessageContent(replyTo: "x", wantsReceipt: true)
        #expect(!rich.isEmpty && MessageContentColumn.decode(MessageContentColumn.encode(rich)) == rich)
    }
}
