import Testing
import StanzaIdentity
import TestSupport

@testable import XMPP

/// What a bound session does with each incoming stanza (RFC 6120 §8, §10; RFC 6121;
/// XEP-0030, XEP-0092, XEP-0115, XEP-0199, XEP-0280): every answer, refusal and drop
/// asserted exactly.
@Suite("SessionStateMachine")
struct SessionStateMachineTests {
    typealias Machine = SessionStateMachine<ManualClock.Instant>

    // MARK: - Fixtures

    static let own = "bot@example.org/bridge"
    static let node = "https://example.org/session-test"
    static let ownBare = "bot@example.org"
    static let juliet = "juliet@capulet.example/balcony"
    static let t0 = ManualClock.Instant()

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    static func machine(policy: Machine.SubscriptionPolicy = .acceptKnown) throws -> Machine {
        Machine(ownJID: try JID(own), configuration: .init(softwareName: "session-test", softwareVersion: "1.0", capabilitiesNode: Self.node, subscriptionPolicy: policy))
    }

    /// The last first-level element of `xml`, parsed inside a `jabber:client` stream.
    static func stanza(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> XMLElement {
        let result = parseStream(testStreamHeader + xml)
        if let error = result.error { throw error }
        return try #require(result.events.compactMap(\.element).last, sourceLocation: sourceLocation)
    }

    /// `Action` is not Equatable; this mirror of it is, with sent elements normalised
    /// (attributes sorted) and the log reason of `ignored` dropped.
    enum Did: Hashable, CustomTestStringConvertible {
        case send(XMLElement)
        case completeRequest(id: String, IQ)
        case emitMessage(Message, carbon: CarbonDirection?)
        case presenceChanged(Presence, best: Presence?)
        case subscriptionRequested(from: JID, Presence)
        case subscriptionChanged(Presence)
        case rosterChanged(Roster.PushOutcome)
        case ignored
        case copyStanzaID(room: JID, id: String, stanzaID: StanzaID)

        init(_ action: Machine.Action) {
            switch action {
            case .send(let element): self = .send(normalized(element))
            case .completeRequest(let id, let iq): self = .completeRequest(id: id, iq)
            case .emitMessage(let message, let carbon): self = .emitMessage(message, carbon: carbon)
            case .presenceChanged(let presence, let best): self = .presenceChanged(presence, best: best)
            case .subscriptionRequested(let from, let presence): self = .subscriptionRequested(from: from, presence)
            case .subscriptionChanged(let presence): self = .subscriptionChanged(presence)
            case .rosterChanged(let outcome): self = .rosterChanged(outcome)
            case .ignored: self = .ignored
            case .copyStanzaID(let room, let id, let stanzaID): self = .copyStanzaID(room: room, id: id, stanzaID: stanzaID)
            }
        }

        /// A `.send` of the element written as `xml` (a fixture that does not parse is recorded as an issue).
        static func sending(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) -> Did {
            do {
                return .send(normalized(try SessionStateMachineTests.stanza(xml)))
            } catch {
                Issue.record("fixture does not parse: \(error)", sourceLocation: sourceLocation)
                return .ignored
            }
        }

        var testDescription: String {
            switch self {
            case .send(let element): ".send(\(render(element)))"
            case .completeRequest(let id, _): ".completeRequest(\(id))"
            case .emitMessage(let message, let carbon): ".emitMessage(\(render(message.element)), carbon: \(String(describing: carbon)))"
            case .presenceChanged(let presence, let best):
                ".presenceChanged(\(render(presence.element)), best: \(best.map { render($0.element) } ?? "nil"))"
            case .subscriptionRequested(let from, _): ".subscriptionRequested(from: \(from))"
            case .subscriptionChanged(let presence): ".subscriptionChanged(\(render(presence.element)))"
            case .rosterChanged(let outcome): ".rosterChanged(\(outcome))"
            case .ignored: ".ignored"
            case .copyStanzaID(let room, let id, let stanzaID): ".copyStanzaID(\(room), \(id), \(stanzaID))"
            }
        }
    }

    /// Feeds `xml` to `machine` and returns what it decided.
    static func receive(_ xml: String, _ machine: inout Machine, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Did] {
        machine.received(try stanza(xml, sourceLocation: sourceLocation)).map(Did.init)
    }

    static func presence(_ xml: String) throws -> Presence { try Presence(element: stanza(xml)) }

    /// A roster result holding `items` (bare JIDs, subscription both).
    static func rosterResult(_ items: [String]) throws -> IQ {
        let itemsXML = items.map { "<item jid='\($0)' subscription='both'/>" }.joined()
        return try IQ(element: stanza("<iq type='result' id='roster-1'><query xmlns='jabber:iq:roster' ver='v1'>\(itemsXML)</query></iq>"))
    }

    // MARK: - Requests we answer

    @Test("ping get → empty result to the sender with the same id (XEP-0199 §4)")
    func ping() throws {
        var machine = try Self.machine()
        let actions = try Self.receive(
            "<iq from='\(Self.juliet)' to='\(Self.own)' type='get' id='ping-1'><ping xmlns='urn:xmpp:ping'/></iq>", &machine
        )
        #expect(actions == [.sending("<iq to='\(Self.juliet)' type='result' id='ping-1'/>")])
    }

    @Test("a ping from our server (no from) is answered without to")
    func pingFromServer() throws {
        var machine = try Self.machine()
        let actions = try Self.receive("<iq type='get' id='s-ping'><ping xmlns='urn:xmpp:ping'/></iq>", &machine)
        #expect(actions == [.sending("<iq type='result' id='s-ping'/>")])
    }

    @Test("disco#info get → client/bot identity and exactly the session's features, named after the software (XEP-0030 §3.1)")
    func discoInfo() throws {
        var machine = try Self.machine()
        let actions = machine.received(
            try Self.stanza("<iq from='\(Self.juliet)' type='get' id='disco-1'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        )
        #expect(actions.count == 1)
        guard case .send(let element) = actions.first else {
            Issue.record("expected a send, got \(actions.map(Did.init))")
            return
        }
        let reply = try IQ(element: element)
        #expect(reply.type == .result)
        #expect(reply.id == "disco-1")
        #expect(reply.to == (try JID(Self.juliet)))
        let query = try #require(reply.payload)
        #expect(query.name == "query")
        #expect(query.namespace == "http://jabber.org/protocol/disco#info")
        #expect(query[attribute: "node"] == nil)

        let identities = query.elements.filter { $0.name == "identity" }
        #expect(identities.count == 1)
        #expect(identities.first?[attribute: "category"] == "client")
        #expect(identities.first?[attribute: "type"] == "bot")
        #expect(identities.first?[attribute: "name"] == "session-test")

        let features = query.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] }
        #expect(features.count == EntityCapabilities.session(named: "session-test").features.count)
        #expect(Set(features) == Set(EntityCapabilities.session(named: "session-test").features))
        #expect(
            Set(features) == [
                "http://jabber.org/protocol/caps", "http://jabber.org/protocol/disco#info", "jabber:iq:version", "urn:xmpp:ping",
                "urn:xmpp:carbons:2",
            ]
        )
        #expect(query.elements.count == identities.count + features.count)
    }

    @Test("disco#info for our caps node#ver → the same answer with the node echoed (XEP-0115 §6.2)")
    func discoInfoCapsNode() throws {
        var machine = try Self.machine()
        let node = "\(Self.node)#\(EntityCapabilities.session(named: "session-test").ver)"
        let actions = try Self.receive(
            "<iq from='\(Self.juliet)' type='get' id='disco-2'><query xmlns='http://jabber.org/protocol/disco#info' node='\(node)'/></iq>",
            &machine
        )
        let expected = IQ(
            type: .result, id: "disco-2", to: try JID(Self.juliet), payload: EntityCapabilities.session(named: "session-test").discoInfoResult(node: node)
        )
        #expect(actions == [.send(normalized(expected.element))])
    }

    @Test("disco#info for an unknown node → item-not-found, carrying the request (XEP-0030 §3.1)")
    func discoInfoUnknownNode() throws {
        var machine = try Self.machine()
        let actions = try Self.receive(
            "<iq from='\(Self.juliet)' type='get' id='disco-3'><query xmlns='http://jabber.org/protocol/disco#info' node='urn:example:nope'/></iq>",
            &machine
        )
        #expect(
            actions == [
                .sending(
                    """
                    <iq to='\(Self.juliet)' type='error' id='disco-3'><query xmlns='http://jabber.org/protocol/disco#info' node='urn:example:nope'/>\
                    <error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
                    """
                )
            ]
        )
    }

    @Test("version get → name and version (XEP-0092)")
    func version() throws {
        var machine = try Self.machine()
        let actions = try Self.receive(
            "<iq from='\(Self.juliet)' type='get' id='v-1'><query xmlns='jabber:iq:version'/></iq>", &machine
        )
        #expect(
            actions == [
                .sending(
                    "<iq to='\(Self.juliet)' type='result' id='v-1'><query xmlns='jabber:iq:version'><name>session-test</name><version>1.0</version></query></iq>"
                )
            ]
        )
    }

    @Test("version get answers with the configured name and version")
    func versionConfigured() throws {
        var machine = Machine(ownJID: try JID(Self.own), configuration: .init(softwareName: "relay <&>", softwareVersion: "2.0-β", capabilitiesNode: Self.node))
        let actions = try Self.receive("<iq from='\(Self.juliet)' type='get' id='v-2'><query xmlns='jabber:iq:version'/></iq>", &machine)
        #expect(
            actions == [
                .sending(
                    "<iq to='\(Self.juliet)' type='result' id='v-2'><query xmlns='jabber:iq:version'><name>relay &lt;&amp;&gt;</name><version>2.0-β</version></query></iq>"
                )
            ]
        )
    }

    // MARK: - Requests we do not implement

    @Test(
        "an unknown get or set → service-unavailable with the original id and payload, never silence (RFC 6120 §8.4)",
        arguments: [
            ("get", "<query xmlns='jabber:iq:last'/>"),
            ("set", "<query xmlns='jabber:iq:private'><note xmlns='urn:example'>x</note></query>"),
            ("get", "<vCard xmlns='vcard-temp'/>"),
            ("set", "<block xmlns='urn:xmpp:blocking'><item jid='eve@evil.example'/></block>"),
            ("set", "<ping xmlns='urn:xmpp:ping'/>"),
            ("set", "<query xmlns='jabber:iq:version'/>"),
            ("set", "<query xmlns='http://jabber.org/protocol/disco#info'/>"),
            ("get", "<query xmlns='jabber:iq:roster'/>"),
        ]
    )
    func unknownRequest(type: String, payload: String) throws {
        var machine = try Self.machine()
        let actions = try Self.receive("<iq from='\(Self.juliet)' type='\(type)' id='u-1'>\(payload)</iq>", &machine)
        #expect(
            actions == [
                .sending(
                    """
                    <iq to='\(Self.juliet)' type='error' id='u-1'>\(payload)\
                    <error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
                    """
                )
            ]
        )
    }

    @Test("an iq get without id cannot be answered: it is only ignored")
    func requestWithoutID() throws {
        var machine = try Self.machine()
        let actions = try Self.receive("<iq from='\(Self.juliet)' type='get'><ping xmlns='urn:xmpp:ping'/></iq>", &machine)
        #expect(actions == [.ignored])
    }

    @Test("an unreadable request with an id gets bad-request, addressed to its sender")
    func unreadableRequest() throws {
        var machine = try Self.machine()
        let actions = try Self.receive(
            "<iq from='\(Self.juliet)' type='get' id='bad-1'><ping xmlns='urn:xmpp:ping'/><query xmlns='jabber:iq:version'/></iq>", &machine
        )
        #expect(
            actions == [
                .sending(
                    "<iq to='\(Self.juliet)' type='error' id='bad-1'><error type='modify'><bad-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
                ),
                .ignored,
            ]
        )
    }

    @Test("a request with a malformed from gets jid-malformed, not addressed back to the bad JID")
    func requestWithMalformedFrom() throws {
        var machine = try Self.machine()
        let actions = try Self.receive("<iq from='juliet@' type='get' id='bad-2'><ping xmlns='urn:xmpp:ping'/></iq>", &machine)
        #expect(
            actions == [
                .sending(
                    "<iq type='error' id='bad-2'><error type='modify'><jid-malformed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
                ),
                .ignored,
            ]
        )
    }

    // MARK: - Roster pushes (RFC 6121 §2.1.6)

    @Test("a roster push from a stranger → error reply, ignored, roster unchanged")
    func rosterPushFromStranger() throws {
        var machine = try Self.machine()
        try machine.rosterReceived(try Self.rosterResult(["juliet@capulet.example"]))
        let before = machine.roster
        let push = "<query xmlns='jabber:iq:roster'><item jid='mallory@evil.example' subscription='both'/></query>"
        let actions = try Self.receive("<iq from='eve@evil.example' type='set' id='push-evil'>\(push)</iq>", &machine)
        #expect(
            actions == [
                .sending(
                    """
                    <iq to='eve@evil.example' type='error' id='push-evil'>\(push)\
                    <error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
                    """
                ),
                .ignored,
            ]
        )
        #expect(machine.roster == before)
        #expect(machine.roster.items[try JID("mallory@evil.example")] == nil)
    }

    @Test("a roster push from one of our own full JIDs is refused too")
    func rosterPushFromOwnFullJID() throws {
        var machine = try Self.machine()
        let actions = machine.received(
            try Self.stanza(
                "<iq from='\(Self.ownBare)/other' type='set' id='push-full'><query xmlns='jabber:iq:roster'><item jid='mallory@evil.example'/></query></iq>"
            )
        )
        #expect(actions.count == 2)
        #expect(actions.last.map(Did.init) == .ignored)
        #expect(machine.roster.items.isEmpty)
    }

    @Test("a valid push from our bare JID → result + rosterChanged(.applied)", arguments: [true, false])
    func rosterPushFromOwnAccount(withFrom: Bool) throws {
        var machine = try Self.machine()
        let fromAttribute = withFrom ? " from='\(Self.ownBare)'" : ""
        let actions = try Self.receive(
            "<iq\(fromAttribute) type='set' id='push-1'><query xmlns='jabber:iq:roster' ver='v2'><item jid='nurse@capulet.example' name='Nurse' subscription='to'><group>Capulets</group></item></query></iq>",
            &machine
        )
        let item = RosterItem(jid: try JID("nurse@capulet.example"), name: "Nurse", groups: ["Capulets"], subscription: .to)
        let reply = withFrom ? "<iq to='\(Self.ownBare)' type='result' id='push-1'/>" : "<iq type='result' id='push-1'/>"
        #expect(actions == [.sending(reply), .rosterChanged(.applied(item))])
        #expect(machine.roster.items == [item.jid: item])
        #expect(machine.roster.version == "v2")
    }

    @Test("a push with subscription='remove' → result + rosterChanged(.removed)")
    func rosterPushRemove() throws {
        var machine = try Self.machine()
        try machine.rosterReceived(try Self.rosterResult(["juliet@capulet.example", "nurse@capulet.example"]))
        let actions = try Self.receive(
            "<iq from='\(Self.ownBare)' type='set' id='push-2'><query xmlns='jabber:iq:roster'><item jid='nurse@capulet.example' subscription='remove'/></query></iq>",
            &machine
        )
        let nurse = try JID("nurse@capulet.example")
        let juliet = try JID("juliet@capulet.example")
        #expect(actions == [.sending("<iq to='\(Self.ownBare)' type='result' id='push-2'/>"), .rosterChanged(.removed(nurse))])
        #expect(Array(machine.roster.items.keys) == [juliet])
    }

    @Test("rosterReceived refuses anything but a result")
    func rosterReceivedNeedsResult() throws {
        var machine = try Self.machine()
        let failure = try IQ(element: Self.stanza("<iq type='error' id='r'><error type='cancel'><not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"))
        #expect(throws: StanzaParseError.invalidType("error")) { try machine.rosterReceived(failure) }
        #expect(machine.roster.items.isEmpty)
    }

    // MARK: - Messages and carbons (XEP-0280)

    static let innerMessage =
        "<message xmlns='jabber:client' from='boss@example.org/desk' to='bot@example.org/phone' type='chat' id='in-1'><body>pay Eve</body></message>"

    static func carbon(_ direction: String, from: String?) -> String {
        let fromAttribute = from.map { " from='\($0)'" } ?? ""
        return """
            <message\(fromAttribute) to='\(own)' type='chat'><\(direction) xmlns='urn:xmpp:carbons:2'>\
            <forwarded xmlns='urn:xmpp:forward:0'>\(innerMessage)</forwarded></\(direction)></message>
            """
    }

    @Test(
        "a forged carbon (outer from not our bare JID) is ignored and not delivered",
        arguments: ["eve@evil.example", "eve@evil.example/res", "bot@example.org/other", "example.org", nil] as [String?]
    )
    func forgedCarbon(from: String?) throws {
        for direction in ["received", "sent"] {
            var machine = try Self.machine()
            let actions = try Self.receive(Self.carbon(direction, from: from), &machine)
            #expect(actions == [.ignored])
        }
    }

    @Test("a genuine carbon delivers the inner message with its direction", arguments: [("received", CarbonDirection.received), ("sent", .sent)])
    func genuineCarbon(direction: String, expected: CarbonDirection) throws {
        var machine = try Self.machine()
        let inner = try Message(element: Self.stanza(Self.innerMessage))
        let actions = try Self.receive(Self.carbon(direction, from: Self.ownBare), &machine)
        #expect(actions == [.emitMessage(inner, carbon: expected)])
        #expect(inner.body == "pay Eve")
    }

    @Test("a plain message is delivered as it is, not as a carbon")
    func plainMessage() throws {
        var machine = try Self.machine()
        let xml = "<message from='\(Self.juliet)' to='\(Self.own)' type='chat' id='c-1'><body>hi 👋</body><active xmlns='http://jabber.org/protocol/chatstates'/></message>"
        let message = try Message(element: Self.stanza(xml))
        #expect(try Self.receive(xml, &machine) == [.emitMessage(message, carbon: nil)])
    }

    @Test("an unreadable message is ignored, not answered")
    func unreadableMessage() throws {
        var machine = try Self.machine()
        #expect(try Self.receive("<message from='juliet@' type='chat' id='x'><body>x</body></message>", &machine) == [.ignored])
    }

}
