import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRouting

/// The pure router of issue 4 ("Routing"): fan-out, directions, no open relay, no empty
/// bodies, and no loops — between two accounts of one bridge, through other bridges and
/// along multi-hop chains — all without sockets.
@Suite("Router")
struct RouterTests {
    static func member(_ transport: String, _ address: String? = nil, _ direction: ChannelMember.Direction = .inout) -> ChannelMember {
        ChannelMember(endpoint: Endpoint(transport: transport, address: address), direction: direction)
    }

    static func message(
        _ transport: String, _ address: String?, body: String? = "hello", nick: String = "Alice", subject: String? = nil,
        relayedBy: String? = nil, channel: String? = nil, type: RelayChannel.DeliveryType? = nil
    ) -> InboundMessage {
        InboundMessage(
            source: Endpoint(transport: transport, address: address), sender: address.map { "\($0)/phone" } ?? transport,
            nick: nick, id: "source-1", body: body, subject: subject, relayedBy: relayedBy, channel: channel, requestedType: type
        )
    }

    /// Routes with relay ids `relay-1`, `relay-2`, … in the order the router asks for them.
    static func route(_ router: Router, _ message: InboundMessage) -> RoutingDecision {
        var next = 0
        return router.route(message) {
            next += 1
            return "relay-\(next)"
        }
    }

    static func deliveries(_ decision: RoutingDecision, sourceLocation: SourceLocation = #_sourceLocation) -> [Delivery] {
        switch decision {
        case .deliver(let deliveries):
            return deliveries
        case .drop(let reason):
            Issue.record("expected deliveries, dropped: \(reason)", sourceLocation: sourceLocation)
            return []
        }
    }

    /// `channel → target` for each delivery, in order.
    static func targets(_ decision: RoutingDecision, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        Self.deliveries(decision, sourceLocation: sourceLocation).map { "\($0.channel) → \($0.target)" }
    }

    // MARK: - Fan-out and membership

    @Test("a member's message fans out to every other member, each delivery complete")
    func fanOut() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "team",
                    members: [Self.member("work", "alice@a.example"), Self.member("work", "bob@a.example"),
                        Self.member("home", "carol@b.example"), Self.member("ops", nil, .out)]
                )
            ],
            ownJIDs: []
        )
        let decision = Self.route(router, Self.message("work", "alice@a.example", subject: "status"))
        #expect(Self.targets(decision) == ["team → work:bob@a.example", "team → home:carol@b.example", "team → ops"])
        let deliveries = Self.deliveries(decision)
        #expect(deliveries.map(\.relayID) == ["relay-1", "relay-2", "relay-3"])
        #expect(
            deliveries.first
                == Delivery(
                    sequence: 0, channel: "team", target: Endpoint(transport: "work", address: "bob@a.example"),
                    body: "[team] Alice: hello", originalBody: "hello", nick: "Alice", subject: "status", type: .chat,
                    source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "source-1", relayID: "relay-1"
                )
        )
    }

    @Test("a NUL in a body (a local line or an HTTP body may hold one) is left out of what is relayed; only NULs and spaces is no body")
    func nulLeftOut() {
        let router = Router(channels: [RelayChannel(name: "ops", members: [Self.member("stdin", nil, .in), Self.member("home", "bob@b.example", .out)])], ownJIDs: [])
        let deliveries = Self.deliveries(Self.route(router, Self.message("stdin", nil, body: "disk\u{0} full\u{0}", nick: "cron")))
        #expect(deliveries.map(\.originalBody) == ["disk full"])
        #expect(deliveries.map(\.body) == ["[ops] cron: disk full"])
        guard case .drop(.noBody) = Self.route(router, Self.message("stdin", nil, body: "\u{0} \u{0}")) else {
            Issue.record("a body of NULs and spaces is no body")
            return
        }
    }

    @Test("an `in` member's messages go out but it receives nothing; an `out` member cannot send")
    func directions() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "news",
                    members: [Self.member("work", "alice@a.example", .in), Self.member("work", "bob@a.example", .out),
                        Self.member("work", "carol@a.example", .inout)]
                )
            ],
            ownJIDs: []
        )
        #expect(
            Self.targets(Self.route(router, Self.message("work", "alice@a.example")))
                == ["news → work:bob@a.example", "news → work:carol@a.example"]
        )
        #expect(Self.targets(Self.route(router, Self.message("work", "carol@a.example"))) == ["news → work:bob@a.example"])
        #expect(Self.route(router, Self.message("work", "bob@a.example")) == .drop(reason: .notAMember))
    }

    @Test("strangers are never relayed, not even a member's JID through another account")
    func unknownSender() {
        let router = Router(
            channels: [RelayChannel(name: "team", members: [Self.member("work", "alice@a.example"), Self.member("work", "bob@a.example")])],
            ownJIDs: []
        )
        #expect(Self.route(router, Self.message("work", "mallory@evil.example")) == .drop(reason: .notAMember))
        #expect(Self.route(router, Self.message("home", "alice@a.example")) == .drop(reason: .notAMember))
        #expect(Self.route(router, Self.message("ops", nil)) == .drop(reason: .notAMember))
    }

    @Test("a channel with nobody else who may receive drops the message")
    func noReceivers() {
        let alone = Router(channels: [RelayChannel(name: "solo", members: [Self.member("work", "alice@a.example")])], ownJIDs: [])
        #expect(Self.route(alone, Self.message("work", "alice@a.example")) == .drop(reason: .noReceivers))
        let senders = Router(
            channels: [RelayChannel(name: "in", members: [Self.member("work", "alice@a.example"), Self.member("work", "bob@a.example", .in)])],
            ownJIDs: []
        )
        #expect(Self.route(senders, Self.message("work", "alice@a.example")) == .drop(reason: .noReceivers))
    }

    @Test("no body, an empty one or only whitespace is not relayed", arguments: [nil, "", " ", "\n\t  \r\n", "\u{00A0}\u{2003}"])
    func emptyBodies(body: String?) {
        let router = Router(
            channels: [RelayChannel(name: "team", members: [Self.member("work", "alice@a.example"), Self.member("work", "bob@a.example")])],
            ownJIDs: []
        )
        #expect(Self.route(router, Self.message("work", "alice@a.example", body: body)) == .drop(reason: .noBody))
    }

    @Test("a body with text is relayed exactly as written, whitespace included")
    func bodyVerbatim() {
        let router = Router(
            channels: [RelayChannel(name: "team", members: [Self.member("work", "alice@a.example"), Self.member("work", "bob@a.example")], format: "{body}")],
            ownJIDs: []
        )
        let delivery = Self.deliveries(Self.route(router, Self.message("work", "alice@a.example", body: "  two\nlines ")))
        #expect(delivery.map(\.body) == ["  two\nlines "])
        #expect(delivery.map(\.originalBody) == ["  two\nlines "])
    }

    @Test("rules apply in order: body, relay marker, own account, membership")
    func ruleOrder() {
        let router = Router(channels: [], ownJIDs: ["bridge@a.example"])
        #expect(Self.route(router, Self.message("work", "bridge@a.example", body: " ", relayedBy: "x")) == .drop(reason: .noBody))
        #expect(Self.route(router, Self.message("work", "bridge@a.example", relayedBy: "x")) == .drop(reason: .alreadyRelayed(by: "x")))
        #expect(Self.route(router, Self.message("work", "bridge@a.example")) == .drop(reason: .fromOwnAccount))
        #expect(Self.route(router, Self.message("work", "bridge@a.example", channel: "c")) == .drop(reason: .fromOwnAccount))
        #expect(Self.route(router, Self.message("work", "alice@a.example")) == .drop(reason: .notAMember))
        #expect("\(DropReason.notAMemberOf(channel: "c"))" == "sender is no sending member of channel c")
    }

    // MARK: - Loops

    @Test("two accounts of this bridge in each other's channels: the ping-pong ends at the own-account rule")
    func twoAccountLoop() {
        let router = Router(
            channels: [
                RelayChannel(name: "a", members: [Self.member("work", "alice@a.example"), Self.member("work", "bridge-home@b.example", .out)]),
                RelayChannel(name: "b", members: [Self.member("home", "bridge-work@a.example"), Self.member("home", "bob@b.example")]),
            ],
            ownJIDs: ["bridge-work@a.example", "bridge-home@b.example"]
        )
        // The first step by hand: alice → work → bridge-home; account home receives it from bridge-work.
        let first = Self.deliveries(Self.route(router, Self.message("work", "alice@a.example", body: "ping")))
        #expect(first.map(\.target) == [Endpoint(transport: "work", address: "bridge-home@b.example")])
        let echo = Self.message("home", "bridge-work@a.example", body: first.first?.body)
        #expect(Self.route(router, echo) == .drop(reason: .fromOwnAccount))

        // The whole ping-pong, with relay markers lost on the way so only the own-account rule holds.
        var network = BridgeNetwork(
            bridges: [.init(name: "bridge", accounts: ["work": "bridge-work@a.example", "home": "bridge-home@b.example"], router: router)],
            carriesRelayMarker: false
        )
        for round in 1...3 {
            network.send(Self.message("work", "alice@a.example", body: "ping \(round)"), to: 0)
            network.send(Self.message("home", "bob@b.example", body: "pong \(round)", nick: "Bob"), to: 0)
        }
        #expect(network.run(rounds: 10) == 2)
        #expect(network.delivered == 6)
        #expect(network.drops == Array(repeating: .fromOwnAccount, count: 6))
        #expect(network.outbox.isEmpty)
    }

    @Test("a message relayed by another bridge is never relayed again, however many hops it took")
    func relayedByAnotherBridge() {
        let router = Router(
            channels: [RelayChannel(name: "chain", members: [Self.member("work", "gateway@x.example"), Self.member("work", "bob@a.example")])],
            ownJIDs: ["bridge@a.example"]
        )
        #expect(Self.targets(Self.route(router, Self.message("work", "gateway@x.example"))) == ["chain → work:bob@a.example"])
        #expect(
            Self.route(router, Self.message("work", "gateway@x.example", relayedBy: "bridge-x"))
                == .drop(reason: .alreadyRelayed(by: "bridge-x"))
        )
    }

    /// Three bridges in a ring, each linking its own user with the next bridge's account.
    static func ring(carriesRelayMarker: Bool) -> BridgeNetwork {
        let names = ["x", "y", "z"]
        let bridges = names.indices.map { index in
            let name = names[index]
            let next = names[(index + 1) % names.count]
            let previous = names[(index + names.count - 1) % names.count]
            let router = Router(
                channels: [
                    RelayChannel(
                        name: "ring",
                        members: [Self.member("main", "user@\(name).example"), Self.member("main", "bridge@\(next).example"),
                            Self.member("main", "bridge@\(previous).example")]
                    )
                ],
                ownJIDs: ["bridge@\(name).example"]
            )
            return BridgeNetwork.Bridge(name: "bridge-\(name)", accounts: ["main": "bridge@\(name).example"], router: router)
        }
        return BridgeNetwork(bridges: bridges, carriesRelayMarker: carriesRelayMarker)
    }

    @Test("a three-hop chain through external bridges ends after one relay")
    func threeHopChain() {
        var network = Self.ring(carriesRelayMarker: true)
        network.send(Self.message("main", "user@x.example", body: "around"), to: 0)
        #expect(network.run(rounds: 10) == 2)
        #expect(network.delivered == 2)
        #expect(network.drops == [.alreadyRelayed(by: "bridge-x"), .alreadyRelayed(by: "bridge-x")])
        #expect(network.outbox.isEmpty)
    }

    @Test("the same ring without relay markers would never end: the marker is what breaks it")
    func ringWithoutMarkers() {
        var network = Self.ring(carriesRelayMarker: false)
        network.send(Self.message("main", "user@x.example", body: "around"), to: 0)
        #expect(network.run(rounds: 10) == nil)
        #expect(!network.outbox.isEmpty)
    }

    @Test("the same JID reachable through two accounts does not get its own message back")
    func sameJIDTwoAccounts() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "both",
                    members: [Self.member("work", "carol@c.example"), Self.member("home", "Carol@C.example"),
                        Self.member("work", "alice@a.example"), Self.member("home", "dave@d.example")]
                )
            ],
            ownJIDs: []
        )
        let expected = ["both → work:alice@a.example", "both → home:dave@d.example"]
        #expect(Self.targets(Self.route(router, Self.message("work", "carol@c.example"))) == expected)
        #expect(Self.targets(Self.route(router, Self.message("home", "carol@c.example"))) == expected)
    }

    @Test("a target in several channels gets one delivery, through the first channel")
    func oneDeliveryPerTarget() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "x",
                    members: [Self.member("work", "alice@a.example", .in), Self.member("ops", nil, .out), Self.member("work", "bob@a.example", .out)]
                ),
                RelayChannel(
                    name: "y",
                    members: [Self.member("work", "alice@a.example", .in), Self.member("home", "carol@b.example", .out), Self.member("ops", nil, .out)]
                ),
                RelayChannel(name: "z", members: [Self.member("work", "alice@a.example", .out), Self.member("work", "bob@a.example", .inout)]),
            ],
            ownJIDs: []
        )
        #expect(
            Self.targets(Self.route(router, Self.message("work", "alice@a.example")))
                == ["x → ops", "x → work:bob@a.example", "y → home:carol@b.example"]
        )
    }

    // MARK: - Local transports

    @Test("a local transport (stdin) sends into its channel")
    func localSender() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "alerts",
                    members: [Self.member("ops", nil, .in), Self.member("work", "alice@a.example", .out), Self.member("home", "bob@b.example", .out)],
                    format: "[{account}] {body}", deliveryType: .headline
                )
            ],
            ownJIDs: []
        )
        let deliveries = Self.deliveries(Self.route(router, Self.message("ops", nil, body: "backup ok", nick: "ops")))
        #expect(deliveries.map(\.target.description) == ["work:alice@a.example", "home:bob@b.example"])
        #expect(deliveries.map(\.body) == ["[ops] backup ok", "[ops] backup ok"])
        #expect(deliveries.allSatisfy { $0.type == .headline && $0.source == Endpoint(transport: "ops") })
    }

    @Test("local transports receive, and one local source does not exclude another")
    func localReceivers() {
        let router = Router(
            channels: [
                RelayChannel(name: "mix", members: [Self.member("work", "alice@a.example"), Self.member("log", nil, .out), Self.member("ops", nil, .inout)])
            ],
            ownJIDs: []
        )
        #expect(Self.targets(Self.route(router, Self.message("work", "alice@a.example"))) == ["mix → log", "mix → ops"])
        #expect(Self.targets(Self.route(router, Self.message("ops", nil))) == ["mix → work:alice@a.example", "mix → log"])
        #expect(Self.route(router, Self.message("log", nil)) == .drop(reason: .notAMember))
    }

    @Test("local input naming a channel goes only there, and only if it is a sending member")
    func namedChannel() {
        let router = Router(
            channels: [
                RelayChannel(name: "a", members: [Self.member("sock", nil), Self.member("work", "alice@a.example")]),
                RelayChannel(name: "b", members: [Self.member("sock", nil, .in), Self.member("work", "bob@a.example")]),
                RelayChannel(name: "c", members: [Self.member("sock", nil, .out), Self.member("work", "carol@a.example")]),
            ],
            ownJIDs: []
        )
        #expect(Self.targets(Self.route(router, Self.message("sock", nil))) == ["a → work:alice@a.example", "b → work:bob@a.example"])
        #expect(Self.targets(Self.route(router, Self.message("sock", nil, channel: "b"))) == ["b → work:bob@a.example"])
        #expect(Self.route(router, Self.message("sock", nil, channel: "c")) == .drop(reason: .notAMemberOf(channel: "c")))
        #expect(Self.route(router, Self.message("sock", nil, channel: "nope")) == .drop(reason: .notAMemberOf(channel: "nope")))
        #expect(Self.route(router, Self.message("stdin", nil, channel: "a")) == .drop(reason: .notAMemberOf(channel: "a")))
    }

    @Test("a requested message type overrides the channel's")
    func requestedType() {
        let router = Router(
            channels: [RelayChannel(name: "a", members: [Self.member("sock", nil), Self.member("work", "alice@a.example")], deliveryType: .headline)],
            ownJIDs: []
        )
        #expect(Self.deliveries(Self.route(router, Self.message("sock", nil))).map(\.type) == [.headline])
        #expect(Self.deliveries(Self.route(router, Self.message("sock", nil, type: .normal))).map(\.type) == [.normal])
        #expect(Self.deliveries(Self.route(router, Self.message("sock", nil, type: .chat))).map(\.type) == [.chat])
    }

    // MARK: - Format and addresses

    @Test("the channel format fills every placeholder once and leaves unknown ones")
    func formatPlaceholders() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "fmt",
                    members: [Self.member("work", "alice@a.example"), Self.member("home", "bob@b.example")],
                    format: "{account}|{channel}|{nick}|{sender}|{body}|{unknown}|{}|{{nick}|{nick"
                )
            ],
            ownJIDs: []
        )
        let plain = Self.deliveries(Self.route(router, Self.message("work", "alice@a.example", body: "hi")))
        #expect(plain.map(\.body) == ["work|fmt|Alice|alice@a.example/phone|hi|{unknown}|{}|{Alice|{nick"])

        let tricky = Self.deliveries(Self.route(router, Self.message("work", "alice@a.example", body: "{nick} and {body}", nick: "{sender}")))
        #expect(tricky.map(\.body) == ["work|fmt|{sender}|alice@a.example/phone|{nick} and {body}|{unknown}|{}|{{sender}|{nick"])
        #expect(tricky.map(\.originalBody) == ["{nick} and {body}"])
        #expect(tricky.map(\.nick) == ["{sender}"])
    }

    @Test(
        "relay formats parse into literals and known placeholders",
        arguments: [
            ("", ""), ("plain", "plain"), ("{nick}{nick}", "NN"), ("}{nick}{", "}N{"), ("{{body}}", "{B}"),
            ("é{body}ü", "éBü"), ("{NICK}", "{NICK}"), ("{ nick}", "{ nick}"),
        ]
    )
    func formatEdges(template: String, rendered: String) {
        let format = RelayFormat(template)
        #expect(format.render { $0 == .nick ? "N" : "B" } == rendered)
    }

    @Test("addresses match case-insensitively, and deliveries carry them lower-cased")
    func caseInsensitive() {
        let router = Router(
            channels: [
                RelayChannel(
                    name: "team",
                    members: [Self.member("work", "alice@a.example"), Self.member("work", "Bob@B.Example"), Self.member("home", "ALICE@a.example")]
                )
            ],
            ownJIDs: ["Bridge-Work@A.example"]
        )
        let decision = Self.route(router, Self.message("work", "Alice@A.example"))
        #expect(Self.targets(decision) == ["team → work:bob@b.example"])
        #expect(Self.deliveries(decision).map(\.source) == [Endpoint(transport: "work", address: "Alice@A.example")])
        #expect(Self.route(router, Self.message("work", "bridge-work@a.EXAMPLE")) == .drop(reason: .fromOwnAccount))
    }
}

/// A toy XMPP network of bridges for loop tests: a delivery from account T to an address that
/// is some bridge's account arrives there as an inbound message from T's JID; any other
/// address is an outside contact and ends the hop.
struct BridgeNetwork {
    struct Bridge {
        var name: String
        /// Account name → the account's bare JID.
        var accounts: [String: String]
        var router: Router
    }

    var bridges: [Bridge]
    /// Whether the receiving transport still sees the relay marker (`relayedBy`).
    var carriesRelayMarker: Bool
    /// Messages in flight: (bridge index, message).
    var outbox: [(Int, InboundMessage)] = []
    var delivered = 0
    var drops: [DropReason] = []
    var nextID = 0

    mutating func send(_ message: InboundMessage, to bridge: Int) {
        self.outbox.append((bridge, message))
    }

    /// Routes everything in flight, round by round; the number of rounds it took to drain,
    /// or nil if messages are still in flight after `rounds`.
    mutating func run(rounds: Int) -> Int? {
        for round in 1...rounds {
            let inFlight = self.outbox
            self.outbox = []
            for (index, message) in inFlight {
                let bridge = self.bridges[index]
                let decision = bridge.router.route(message) {
                    self.nextID += 1
                    return "relay-\(self.nextID)"
                }
                switch decision {
                case .drop(let reason):
                    self.drops.append(reason)
                case .deliver(let deliveries):
                    for delivery in deliveries {
                        self.deliver(delivery, from: bridge)
                    }
                }
            }
            if self.outbox.isEmpty {
                return round
            }
        }
        return nil
    }

    mutating func deliver(_ delivery: Delivery, from bridge: Bridge) {
        self.delivered += 1
        guard let address = delivery.target.address, let senderJID = bridge.accounts[delivery.target.transport] else { return }
        for (index, receiver) in self.bridges.enumerated() {
            for (account, jid) in receiver.accounts where jid == address {
                let message = InboundMessage(
                    source: Endpoint(transport: account, address: senderJID), sender: "\(senderJID)/bridge", nick: bridge.name,
                    id: delivery.relayID, body: delivery.body, relayedBy: self.carriesRelayMarker ? bridge.name : nil
                )
                self.outbox.append((index, message))
            }
        }
    }
}
