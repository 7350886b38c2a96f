import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRouting

/// Gateway routing (issue 23): a user's message to a puppet goes to the contact it stands
/// for through the linked account; a linked account's contacts reach the user from their
/// puppets; rooms, own accounts and strangers to the link are never relayed this way.
@Suite("Gateway routing")
struct GatewayRoutingTests {
    static let link = GatewayLink(gateway: "gateway.home", user: "Alice@Work.example", account: "home")
    static let router = Router(
        channels: [RelayChannel(name: "ops", members: [RouterTests.member("home", "bob@home.example"), RouterTests.member("console")])],
        ownJIDs: ["home@home.example"], gatewayLinks: [Self.link]
    )

    static func fromUser(to addressee: String?, body: String = "hi", type: RelayChannel.DeliveryType? = .chat) -> InboundMessage {
        var message = RouterTests.message("gateway.home", "alice@work.example", body: body)
        message.addressee = addressee
        message.sourceType = type
        return message
    }

    @Test("alice → bob's puppet: one delivery to bob through home, the text as written, the type kept")
    func userToContact() {
        let deliveries = RouterTests.deliveries(RouterTests.route(Self.router, Self.fromUser(to: "Bob@home.example", body: "<&> 漢字", type: .normal)))
        #expect(deliveries.map(\.target) == [Endpoint(transport: "home", address: "bob@home.example")])
        #expect(deliveries.first?.body == "<&> 漢字" && deliveries.first?.type == .normal && deliveries.first?.channel == "gateway.home")
    }

    @Test("any address alice writes to is reached, in the roster or not; none, or the linked account itself, is not")
    func anyAddress() {
        #expect(RouterTests.deliveries(RouterTests.route(Self.router, Self.fromUser(to: "stranger@else.example"))).map(\.target.address) == ["stranger@else.example"])
        #expect(RouterTests.route(Self.router, Self.fromUser(to: nil)) == .drop(reason: .noAddressee))
        #expect(RouterTests.route(Self.router, Self.fromUser(to: "home@home.example")) == .drop(reason: .noReceivers))
    }

    @Test("bob → home: alice gets it from bob's puppet (the delivery's source), beside the channel bob is in; headlines stay headlines")
    func contactToUser() {
        var message = RouterTests.message("home", "bob@home.example", body: "hello")
        message.sourceType = .headline
        let deliveries = RouterTests.deliveries(RouterTests.route(Self.router, message))
        let toAlice = deliveries.filter { $0.target.transport == "gateway.home" }
        #expect(toAlice.map(\.target.address) == ["alice@work.example"])
        #expect(toAlice.first?.source == Endpoint(transport: "home", address: "bob@home.example") && toAlice.first?.body == "hello" && toAlice.first?.type == .headline)
        #expect(deliveries.contains { $0.target.transport == "console" }, "the channel still gets it")
        let stranger = RouterTests.deliveries(RouterTests.route(Self.router, RouterTests.message("home", "carol@home.example")))
        #expect(stranger.map(\.target.transport) == ["gateway.home"], "every contact of a linked account reaches its users")
    }

    @Test("never through the gateway: rooms, the bridge's own accounts, already relayed messages, other users of the gateway, accounts not linked")
    func notRelayed() {
        let room = Router(
            channels: [RelayChannel(name: "dev", members: [ChannelMember(endpoint: Endpoint(transport: "home", address: "dev@muc.home.example"), direction: .inout, room: RoomMembership())])],
            ownJIDs: [], gatewayLinks: [Self.link]
        )
        let fromRoom = RouterTests.route(room, RouterTests.message("home", "dev@muc.home.example"))
        if case .deliver(let deliveries) = fromRoom { #expect(!deliveries.contains { $0.target.transport == "gateway.home" }) }
        #expect(RouterTests.route(Self.router, RouterTests.message("home", "home@home.example")) == .drop(reason: .fromOwnAccount))
        #expect(RouterTests.route(Self.router, RouterTests.message("home", "bob@home.example", relayedBy: "other")) == .drop(reason: .alreadyRelayed(by: "other")))
        var eve = RouterTests.message("gateway.home", "eve@work.example")
        eve.addressee = "bob@home.example"
        #expect(RouterTests.route(Self.router, eve) == .drop(reason: .notAMember))
        #expect(RouterTests.route(Self.router, RouterTests.message("work", "bob@home.example")) == .drop(reason: .notAMember))
    }

    @Test("an encrypted message from alice is not relayed; the notice goes back to her from the puppet")
    func encryptedNotice() {
        var message = Self.fromUser(to: "bob@home.example", body: "fallback")
        message.content.encryption = "OMEMO"
        #expect(RouterTests.route(Self.router, message) == .drop(reason: .encrypted("OMEMO")))
        let notice = Self.router.encryptionNotice(for: message, relayID: "n1")
        #expect(notice?.target == Endpoint(transport: "gateway.home", address: "alice@work.example"))
        #expect(notice?.source == Endpoint(transport: "home", address: "bob@home.example"), "from bob's puppet")
    }

    @Test("gateway names: the delivery channel, and who relays through it")
    func names() {
        #expect(Self.router.isGatewayChannel("gateway.home") && !Self.router.isGatewayChannel("ops"))
        #expect(Self.router.relaysThroughGateway(Endpoint(transport: "gateway.home", address: "alice@work.example")))
        #expect(Self.router.relaysThroughGateway(Endpoint(transport: "home", address: "carol@home.example")))
        #expect(!Self.router.relaysThroughGateway(Endpoint(transport: "home", address: "home@home.example")))
        #expect(!Self.router.relaysThroughGateway(Endpoint(transport: "console")))
    }
}
