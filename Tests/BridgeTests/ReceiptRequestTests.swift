import Foundation
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRouting
@testable import BridgeState
@testable import LocalArchive

/// Which copies ask their target for a receipt (issue 43, what a relayed message costs the
/// server): those of local inputs and pages, whose delivery status is kept, and those
/// whose receipt goes back to a sender who asked for one. Any other
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

    @Test("a local input's copies and pages always ask (their delivery status is kept); a notice back to a sender does not")
    func localPagesAndNotices() throws {
        let toBob = Self.copies(Self.router(receipts: false), from: Self.console, asking: nil).filter { $0.target == Self.bob }
        #expect(toBob.map(\.asksReceipt) == [true])
        let page = Delivery(
            channel: "c", target: Self.bob, body: "page", originalBody: "page", nick: "xmpp-bridge", type: .chat,
            source: Endpoint(transport: "paging"), sourceID: "p-1", relayID: "p-1"
        )
        #expect(page.asksReceipt)
        var encrypted = InboundMessage(source: Self.alice, sender: "alice@x.test/phone", nick: "Alice", id: "a-2", body: "fallback")
        encrypted.content = MessageContent(encryption: "OMEMO", wantsReceipt: true)
        let notice = try #require(Self.router(receipts: true).encryptionNotice(for: encrypted, relayID: "n-1"))
        #expect(notice.target == Self.alice && !notice.asksReceipt)
    }

    @Test("through a gateway a copy asks exactly when its sender asked: both sides are one conversation")
    func gateway() {
        for asking in [true, nil] as [Bool?] {
            var message = RouterTests.message("home", "bob@home.example", body: "hi")
            message.content.wantsReceipt = asking
            let copies = RouterTests.deliveries(RouterTests.route(GatewayRoutingTests.router, message)).filter { $0.target == GatewayRoutingTests.link.userEndpoint }
            #expect(copies.count == 1)
            #expect(copies.allSatisfy { $0.asksReceipt == (asking == true) }, "\(copies)")
        }
    }

    @Test("the wish is no content (a plain message stays plain), the queue keeps it, the archive drops it")
    func storage() throws {
        let wish = MessageContent(wantsReceipt: true)
        #expect(wish.isEmpty)
        #expect(wish.withoutWantsReceipt == MessageContent())
        #expect(MessageContentColumn.decode(MessageContentColumn.encode(wish)) == wish)
        // Written without a coder, and exactly what the coder writes: any build reads it.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(MessageContentColumn.encode(wish) == String(decoding: try encoder.encode(wish), as: UTF8.self))
        #expect(try JSONDecoder().decode(MessageContent.self, from: Data(MessageContentColumn.wantsReceiptOnly.utf8)) == wish)
        #expect(MessageContentColumn.encode(MessageContent()) == nil)
        let rich = MessageContent(replyTo: "x", wantsReceipt: true)
        #expect(!rich.isEmpty && MessageContentColumn.decode(MessageContentColumn.encode(rich)) == rich)
        // The local archive keeps what was said, not who wanted a receipt of it.
        let archived = ArchivedMessage(
            at: Date(timeIntervalSince1970: 0), channel: "c", source: Self.alice, sender: "alice@x.test/phone", nick: "Alice", sourceID: "a-1",
            body: "hi", content: rich
        )
        let json = String(decoding: (try? JSONEncoder().encode(archived)) ?? Data(), as: UTF8.self)
        #expect(json.contains("replyTo") && !json.contains("wantsReceipt"), "\(json)")
    }
}
