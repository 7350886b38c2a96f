import Testing

@testable import XMPP

/// Parses one `<message/>` written inside a `jabber:client` stream.
private func message(_ xml: String) throws -> Message {
    let result = parseStream(testStreamHeader + xml)
    if let error = result.error { throw error }
    return try Message(element: #require(result.events.compactMap(\.element).last))
}

/// A carbon wrapper (`received` or `sent`) around `inner`, from `from` (none when nil).
private func carbon(_ direction: String, from: String?, inner: String) -> String {
    let fromAttribute = from.map { " from='\($0)'" } ?? ""
    return """
        <message\(fromAttribute) to='romeo@montague.example/home' type='chat'>\
        <\(direction) xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\(inner)</forwarded></\(direction)>\
        </message>
        """
}

private let receivedInner = """
    <message xmlns='jabber:client' from='juliet@capulet.example/balcony' to='romeo@montague.example/garden' type='chat'>\
    <body>What man art thou?</body><thread>t1</thread></message>
    """

private let sentInner = """
    <message xmlns='jabber:client' from='romeo@montague.example/garden' to='juliet@capulet.example/balcony' type='chat'>\
    <body>Neither, fair saint.</body></message>
    """

@Suite("Carbon filter")
struct CarbonFilterTests {
    private let own = try! JID("romeo@montague.example/home")

    @Test("an ordinary message is not a carbon")
    func plain() throws {
        let plain = try message("<message from='juliet@capulet.example/balcony' type='chat'><body>hi</body></message>")
        #expect(CarbonFilter.classify(plain, ownJID: self.own) == .notCarbon)
    }

    @Test("a genuine received carbon unwraps to the original message")
    func received() throws {
        let outcome = CarbonFilter.classify(try message(carbon("received", from: "romeo@montague.example", inner: receivedInner)), ownJID: self.own)
        guard case .received(let inner) = outcome else {
            Issue.record("expected received, got \(outcome)")
            return
        }
        #expect(inner.from == (try JID("juliet@capulet.example/balcony")))
        #expect(inner.to == (try JID("romeo@montague.example/garden")))
        #expect(inner.body == "What man art thou?")
        #expect(inner.thread == "t1")
    }

    @Test("a genuine sent carbon unwraps to the original message")
    func sent() throws {
        let outcome = CarbonFilter.classify(try message(carbon("sent", from: "romeo@montague.example", inner: sentInner)), ownJID: self.own)
        guard case .sent(let inner) = outcome else {
            Issue.record("expected sent, got \(outcome)")
            return
        }
        #expect(inner.from == (try JID("romeo@montague.example/garden")))
        #expect(inner.body == "Neither, fair saint.")
    }

    @Test("the own bare JID is compared after preparation")
    func caseInsensitiveBare() throws {
        let outcome = CarbonFilter.classify(try message(carbon("sent", from: "Romeo@Montague.Example", inner: sentInner)), ownJID: self.own)
        guard case .sent = outcome else {
            Issue.record("expected sent, got \(outcome)")
            return
        }
    }

    @Test("a wrapper from anyone but the own bare JID is forged", arguments: [
        "juliet@capulet.example/balcony", "juliet@capulet.example", "montague.example", "romeo@montague.example/home",
        "romeo@montague.example/garden", "romeo@evil.example",
    ])
    func forgedSender(_ from: String) throws {
        for direction in ["received", "sent"] {
            let outcome = CarbonFilter.classify(try message(carbon(direction, from: from, inner: sentInner)), ownJID: self.own)
            #expect(outcome == .forged(from: try JID(from)))
        }
    }

    @Test("a wrapper without from is forged")
    func forgedNoFrom() throws {
        for direction in ["received", "sent"] {
            let outcome = CarbonFilter.classify(try message(carbon(direction, from: nil, inner: receivedInner)), ownJID: self.own)
            #expect(outcome == .forged(from: nil))
        }
    }

    @Test("a malformed wrapper from the own bare JID is forged", arguments: [
        // No <forwarded/>.
        "<message from='romeo@montague.example'><received xmlns='urn:xmpp:carbons:2'>\(receivedInner)</received></message>",
        // <forwarded/> in the wrong namespace.
        "<message from='romeo@montague.example'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:other'>\(receivedInner)</forwarded></received></message>",
        // Empty <forwarded/>.
        carbon("received", from: "romeo@montague.example", inner: ""),
        // Two inner messages.
        carbon("received", from: "romeo@montague.example", inner: receivedInner + sentInner),
        // Inner message not in jabber:client (inherits urn:xmpp:forward:0).
        carbon("received", from: "romeo@montague.example", inner: "<message from='juliet@capulet.example/b'><body>x</body></message>"),
        // Inner message with an invalid address.
        carbon("received", from: "romeo@montague.example", inner: "<message xmlns='jabber:client' from='a@b@c'><body>x</body></message>"),
        // Nested carbon.
        carbon(
            "received", from: "romeo@montague.example",
            inner: "<message xmlns='jabber:client' from='juliet@capulet.example/b'><sent xmlns='urn:xmpp:carbons:2'>"
                + "<forwarded xmlns='urn:xmpp:forward:0'>\(sentInner)</forwarded></sent></message>"
        ),
        // Both a received and a sent wrapper.
        "<message from='romeo@montague.example'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\(receivedInner)</forwarded></received>"
            + "<sent xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\(sentInner)</forwarded></sent></message>",
    ])
    func malformed(_ xml: String) throws {
        let outcome = CarbonFilter.classify(try message(xml), ownJID: self.own)
        #expect(outcome == .forged(from: try JID("romeo@montague.example")))
    }

    @Test("a private hint or carbons element in another namespace is not a carbon")
    func otherElements() throws {
        let privateHint = try message("<message from='juliet@capulet.example/b'><body>x</body><private xmlns='urn:xmpp:carbons:2'/></message>")
        #expect(CarbonFilter.classify(privateHint, ownJID: self.own) == .notCarbon)
        let foreign = try message("<message from='eve@evil.example'><received xmlns='urn:other'/></message>")
        #expect(CarbonFilter.classify(foreign, ownJID: self.own) == .notCarbon)
    }

    @Test("enable and disable payloads")
    func requests() {
        #expect(CarbonFilter.enableRequest() == XMLElement(name: "enable", namespace: "urn:xmpp:carbons:2"))
        #expect(CarbonFilter.disableRequest() == XMLElement(name: "disable", namespace: "urn:xmpp:carbons:2"))
        #expect(CarbonFilter.feature == "urn:xmpp:carbons:2")
    }
}
