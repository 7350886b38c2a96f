import Testing

@testable import XMPP

extension SessionStateMachineTests {
    // MARK: - Replies to our requests (RFC 6120 §10.1)

    @Test("a reply from where the request went completes it")
    func replyCompletes() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "v1", to: try JID(Self.juliet), deadline: Self.at(30))
        let xml = "<iq from='\(Self.juliet)' to='\(Self.own)' type='result' id='v1'><query xmlns='jabber:iq:version'/></iq>"
        let reply = try IQ(element: Self.stanza(xml))
        #expect(try Self.receive(xml, &machine) == [.completeRequest(id: "v1", reply)])
        #expect(machine.nextDeadline == nil)
        // Answered once: a second copy is unknown.
        #expect(try Self.receive(xml, &machine) == [.ignored])
    }

    @Test("an error reply from the addressee completes the request too")
    func errorReplyCompletes() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "v2", to: try JID(Self.juliet), deadline: Self.at(30))
        let xml = "<iq from='\(Self.juliet)' type='error' id='v2'><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        let reply = try IQ(element: Self.stanza(xml))
        #expect(try Self.receive(xml, &machine) == [.completeRequest(id: "v2", reply)])
    }

    @Test("a spoofed reply from a stranger is ignored; the real reply still completes")
    func spoofedReply() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "v3", to: try JID(Self.juliet), deadline: Self.at(30))
        #expect(try Self.receive("<iq from='eve@evil.example/x' type='result' id='v3'/>", &machine) == [.ignored])
        #expect(try Self.receive("<iq type='result' id='v3'/>", &machine) == [.ignored])
        #expect(try Self.receive("<iq from='juliet@capulet.example' type='result' id='v3'/>", &machine) == [.ignored])
        #expect(machine.nextDeadline == Self.at(30))
        let realXML = "<iq from='\(Self.juliet)' type='result' id='v3'/>"
        #expect(try Self.receive(realXML, &machine) == [.completeRequest(id: "v3", try IQ(element: Self.stanza(realXML)))])
    }

    @Test("a request to our server may be answered without from")
    func serverReply() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "roster-1", to: nil, deadline: Self.at(30))
        let xml = "<iq type='result' id='roster-1'><query xmlns='jabber:iq:roster'/></iq>"
        #expect(try Self.receive(xml, &machine) == [.completeRequest(id: "roster-1", try IQ(element: Self.stanza(xml)))])
    }

    @Test("a reply to an id we never sent is ignored")
    func unknownReply() throws {
        var machine = try Self.machine()
        #expect(try Self.receive("<iq from='\(Self.juliet)' type='result' id='never'/>", &machine) == [.ignored])
    }

    @Test("connectionLost() returns every pending id in the order sent and forgets them")
    func connectionLost() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "a", to: nil, deadline: Self.at(30))
        machine.requestSent(id: "b", to: try JID(Self.juliet), deadline: Self.at(10))
        machine.requestSent(id: "c", to: nil, deadline: Self.at(20))
        _ = try Self.receive("<presence from='\(Self.juliet)'/>", &machine)
        #expect(machine.presences.best(for: try JID("juliet@capulet.example")) != nil)

        #expect(machine.connectionLost() == ["a", "b", "c"])
        #expect(machine.nextDeadline == nil)
        #expect(machine.connectionLost() == [])
        #expect(machine.presences.best(for: try JID("juliet@capulet.example")) == nil)
        #expect(try Self.receive("<iq type='result' id='a'/>", &machine) == [.ignored])
    }

    @Test("expireRequests(now:) returns the timed-out ids, earliest deadline first")
    func expireRequests() throws {
        var machine = try Self.machine()
        machine.requestSent(id: "late", to: nil, deadline: Self.at(30))
        machine.requestSent(id: "early", to: nil, deadline: Self.at(10))
        machine.requestSent(id: "mid", to: nil, deadline: Self.at(20))
        #expect(machine.nextDeadline == Self.at(10))
        #expect(machine.expireRequests(now: Self.at(9)) == [])
        #expect(machine.expireRequests(now: Self.at(20)) == ["early", "mid"])
        #expect(machine.nextDeadline == Self.at(30))
        #expect(try Self.receive("<iq type='result' id='early'/>", &machine) == [.ignored])
        let lateXML = "<iq type='result' id='late'/>"
        #expect(try Self.receive(lateXML, &machine) == [.completeRequest(id: "late", try IQ(element: Self.stanza(lateXML)))])
        #expect(machine.expireRequests(now: Self.at(100)) == [])
    }

    // MARK: - Presence (RFC 6121 §4)

    @Test("available and unavailable presence report the bare JID's best resource")
    func presenceAggregate() throws {
        var machine = try Self.machine()
        let balcony = try Self.presence("<presence from='juliet@capulet.example/balcony'><priority>5</priority></presence>")
        let phone = try Self.presence("<presence from='juliet@capulet.example/phone'><show>away</show><priority>1</priority></presence>")
        let balconyGone = try Self.presence("<presence from='juliet@capulet.example/balcony' type='unavailable'/>")
        let phoneGone = try Self.presence("<presence from='juliet@capulet.example/phone' type='unavailable'/>")

        #expect(machine.received(balcony.element).map(Did.init) == [.presenceChanged(balcony, best: balcony)])
        #expect(machine.received(phone.element).map(Did.init) == [.presenceChanged(phone, best: balcony)])
        #expect(machine.received(balconyGone.element).map(Did.init) == [.presenceChanged(balconyGone, best: phone)])
        #expect(machine.received(phoneGone.element).map(Did.init) == [.presenceChanged(phoneGone, best: nil)])
        #expect(machine.presences.best(for: try JID("juliet@capulet.example")) == nil)
    }

    @Test("presence without from is ignored")
    func presenceWithoutFrom() throws {
        var machine = try Self.machine()
        #expect(try Self.receive("<presence><show>chat</show></presence>", &machine) == [.ignored])
    }

    @Test("probe, error and invalid presence are ignored", arguments: [
        "<presence from='juliet@capulet.example' type='probe'/>",
        "<presence from='juliet@capulet.example' type='error'><error type='cancel'><gone xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
        "<presence from='juliet@capulet.example' type='available'/>",
        "<presence from='juliet@capulet.example' type='bogus'/>",
    ])
    func presenceIgnored(xml: String) throws {
        var machine = try Self.machine()
        #expect(try Self.receive(xml, &machine) == [.ignored])
    }

    // MARK: - Subscriptions (RFC 6121 §3)

    @Test("subscribe from an unknown JID under the default policy is reported, not approved")
    func subscribeUnknownDefault() throws {
        var machine = try Self.machine()
        #expect(machine.configuration.subscriptionPolicy == .acceptKnown)
        let subscribe = try Self.presence("<presence from='stranger@example.net/res' type='subscribe'/>")
        #expect(
            machine.received(subscribe.element).map(Did.init) == [.subscriptionRequested(from: try JID("stranger@example.net"), subscribe)]
        )
    }

    @Test("subscribe from a contact already in the roster is approved with subscribed to its bare JID")
    func subscribeKnownApproved() throws {
        var machine = try Self.machine()
        try machine.rosterReceived(try Self.rosterResult(["juliet@capulet.example"]))
        let actions = try Self.receive("<presence from='\(Self.juliet)' type='subscribe'/>", &machine)
        #expect(actions == [.sending("<presence to='juliet@capulet.example' type='subscribed'/>")])
    }

    @Test("policy manual never approves, even a contact in the roster")
    func subscribeManual() throws {
        var machine = try Self.machine(policy: .manual)
        try machine.rosterReceived(try Self.rosterResult(["juliet@capulet.example"]))
        for from in [Self.juliet, "stranger@example.net"] {
            let subscribe = try Self.presence("<presence from='\(from)' type='subscribe'/>")
            #expect(
                machine.received(subscribe.element).map(Did.init) == [.subscriptionRequested(from: try JID(from).bare, subscribe)]
            )
        }
    }

    @Test("policy acceptAll approves a stranger")
    func subscribeAcceptAll() throws {
        var machine = try Self.machine(policy: .acceptAll)
        let actions = try Self.receive("<presence from='stranger@example.net/res' type='subscribe'/>", &machine)
        #expect(actions == [.sending("<presence to='stranger@example.net' type='subscribed'/>")])
    }

    @Test("subscribed, unsubscribe and unsubscribed are reported as subscription changes", arguments: ["subscribed", "unsubscribe", "unsubscribed"])
    func subscriptionChanged(type: String) throws {
        var machine = try Self.machine()
        let presence = try Self.presence("<presence from='juliet@capulet.example' type='\(type)'/>")
        #expect(machine.received(presence.element).map(Did.init) == [.subscriptionChanged(presence)])
    }

    // MARK: - Not stanzas

    @Test(
        "an element outside jabber:client, or an unknown name, is ignored",
        arguments: [
            XMLElement(name: "r", namespace: "urn:xmpp:sm:3"),
            XMLElement(name: "message", namespace: "jabber:server"),
            XMLElement(name: "iq", namespace: "", attributes: [XMLAttribute(name: "type", value: "get"), XMLAttribute(name: "id", value: "x")]),
            XMLElement(name: "features", namespace: XMPPNamespace.stream),
            XMLElement(name: "thing", namespace: XMPPNamespace.client),
        ]
    )
    func notAStanza(element: XMLElement) throws {
        var machine = try Self.machine()
        #expect(machine.received(element).map(Did.init) == [.ignored])
    }
}
