import Testing

@testable import XMPP

/// Reading and writing `<message/>`, `<presence/>` and `<iq/>` (RFC 6120 §8; RFC 6121
/// §4, §5) and stanza errors (RFC 6120 §8.3), from XML text parsed the way the stream
/// delivers it.
@Suite("Stanzas")
struct StanzaTests {
    // MARK: - Fixtures

    /// The last first-level element of `xml`, parsed inside a `jabber:client` stream.
    static func stanza(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> XMLElement {
        let result = parseStream(testStreamHeader + xml)
        if let error = result.error { throw error }
        return try #require(result.events.compactMap(\.element).last, sourceLocation: sourceLocation)
    }

    /// `element` written as text and parsed back, as a peer would receive it.
    static func reparsed(_ element: XMLElement, sourceLocation: SourceLocation = #_sourceLocation) throws -> XMLElement {
        try stanza(XMLSerializer.string(element, parentNamespace: XMPPNamespace.client), sourceLocation: sourceLocation)
    }

    static func jid(_ text: String) throws -> JID { try JID(text) }

    /// Texts that must survive escaping and UTF-8: markup characters, emoji (incl. a ZWJ
    /// sequence and a flag), CJK, right-to-left, and a mix.
    static let awkwardTexts = [
        #"<&>"'"#,
        "a < b && c > d \"quoted\" 'single' &amp; not an entity",
        "👩‍👩‍👧‍👦 🇯🇵 😀",
        "漢字かなカナ한국어",
        "مرحبا بالعالم",
        "line one\nline two\n\ttabbed",
        "<body>not a child</body> ]]> 🎉 中文",
    ]

    // MARK: - Message

    @Test("a message with unknown extensions and a second-language body keeps every child through element → Message → element")
    func messageRoundTripKeepsEveryChild() throws {
        let original = try Self.stanza(
            """
            <message from='juliet@capulet.example/balcony' to='romeo@montague.example/home' type='chat' id='m1' xml:lang='en'>\
            <body>Hello</body>\
            <body xml:lang='de'>Hallo</body>\
            <active xmlns='http://jabber.org/protocol/chatstates'/>\
            <x xmlns='jabber:x:oob'><url>https://example.org/a.png</url><desc>a picture</desc></x>\
            <subject>Greetings</subject>\
            <thread>t-42</thread>\
            <request xmlns='urn:xmpp:receipts'/>\
            </message>
            """
        )
        #expect(original.elements.count == 7)

        let message = try Message(element: original)
        #expect(message.type == .chat)
        #expect(message.id == "m1")
        #expect(message.from == (try Self.jid("juliet@capulet.example/balcony")))
        #expect(message.to == (try Self.jid("romeo@montague.example/home")))
        #expect(message.header.language == "en")
        #expect(message.body == "Hello")
        #expect(message.subject == "Greetings")
        #expect(message.thread == "t-42")
        #expect(message.error == nil)
        #expect(message.extensions.map(\.name) == ["body", "active", "x", "request"])
        #expect(message.extensions.first?[attribute: "xml:lang"] == "de")
        #expect(message.extensions.first?.text == "Hallo")

        let rebuilt = message.element
        #expect(rebuilt.name == "message")
        #expect(rebuilt.namespace == XMPPNamespace.client)
        #expect(Set(rebuilt.attributes.map { "\($0.name)=\($0.value)" }) == Set(original.attributes.map { "\($0.name)=\($0.value)" }))
        #expect(rebuilt.elements.count == original.elements.count)
        #expect(Set(rebuilt.elements) == Set(original.elements))
        // And the rebuilt element still reads as the same message after a trip through text.
        #expect(try Message(element: Self.reparsed(rebuilt)) == message)
    }

    @Test("a <thread parent=…/> keeps its parent attribute through a round trip (RFC 6121 §5.2.5)")
    func threadParentSurvives() throws {
        let original = try Self.stanza(
            "<message from='juliet@capulet.example/balcony' type='chat'><body>hi</body><thread parent='p-1'>t-2</thread></message>"
        )
        let rebuilt = try Message(element: original).element
        #expect(Set(rebuilt.elements) == Set(original.elements))
    }

    @Test(
        "every message type is read; a missing or unknown type is normal (RFC 6121 §5.2.2)",
        arguments: [
            ("chat", Message.Kind.chat), ("error", .error), ("groupchat", .groupchat), ("headline", .headline),
            ("normal", .normal), (nil, .normal), ("bogus", .normal), ("", .normal),
        ] as [(String?, Message.Kind)]
    )
    func messageTypes(raw: String?, expected: Message.Kind) throws {
        let typeAttribute = raw.map { " type='\($0)'" } ?? ""
        let message = try Message(element: Self.stanza("<message from='juliet@capulet.example'\(typeAttribute)><body>x</body></message>"))
        #expect(message.type == expected)
        #expect(message.body == "x")
        #expect(message.element[attribute: "type"] == expected.rawValue)
    }

    @Test("Message.Kind lists exactly the five RFC 6121 types")
    func messageKinds() {
        #expect(Message.Kind.allCases.map(\.rawValue) == ["chat", "error", "groupchat", "headline", "normal"])
    }

    @Test("body, subject and thread keep markup characters, emoji and CJK through build → text → parse", arguments: awkwardTexts)
    func messageTextsSurviveEscaping(text: String) throws {
        var message = Message(type: .chat, to: try Self.jid("romeo@montague.example"), id: "esc-1", body: text, subject: text)
        message.thread = text
        let parsed = try Message(element: Self.reparsed(message.element))
        #expect(parsed.body == text)
        #expect(parsed.subject == text)
        #expect(parsed.thread == text)
        #expect(parsed.extensions.isEmpty)
        #expect(parsed == message)
    }

    @Test("escaped markup in received XML is read as the characters it stands for")
    func messageEntitiesAreDecoded() throws {
        let message = try Message(
            element: Self.stanza(
                "<message from='juliet@capulet.example' type='chat'><body>&lt;&amp;&gt;&quot;&apos; &#x1F600; &#28450;</body><subject>漢字 👩‍👩‍👧‍👦</subject></message>"
            )
        )
        #expect(message.body == #"<&>"' 😀 漢"#)
        #expect(message.subject == "漢字 👩‍👩‍👧‍👦")
    }

    @Test("the body in another xml:lang stays an extension; the one in the stanza's language is the body")
    func messageBodyLanguages() throws {
        let message = try Message(
            element: Self.stanza(
                "<message from='juliet@capulet.example' type='chat' xml:lang='en'><body xml:lang='fr'>Bonjour</body><body xml:lang='en'>Hello</body></message>"
            )
        )
        #expect(message.body == "Hello")
        #expect(message.extensions.count == 1)
        #expect(message.extensions.first?.text == "Bonjour")
        #expect(message.extensions.first?[attribute: "xml:lang"] == "fr")
    }

    @Test("an error message carries its stanza error and does not keep <error/> as an extension")
    func messageError() throws {
        let message = try Message(
            element: Self.stanza(
                """
                <message from='romeo@montague.example' type='error' id='e1'><body>lost</body>\
                <error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>
                """
            )
        )
        #expect(message.type == .error)
        #expect(message.error == StanzaError(.serviceUnavailable, type: .cancel))
        #expect(message.extensions.isEmpty)
        #expect(message.body == "lost")
    }

    @Test("a message with an invalid from is refused as invalidAddress, answered with jid-malformed")
    func messageInvalidFrom() throws {
        #expect((try? JID("@capulet.example")) == nil)
        let element = try Self.stanza("<message from='@capulet.example' type='chat'><body>x</body></message>")
        do {
            _ = try Message(element: element)
            Issue.record("an invalid from was accepted")
        } catch {
            guard case .invalidAddress(let attribute, let value, _) = error else {
                Issue.record("expected invalidAddress, got \(error)")
                return
            }
            #expect(attribute == "from")
            #expect(value == "@capulet.example")
            #expect(error.stanzaError == StanzaError(.jidMalformed, type: .modify))
        }
    }

    @Test("an element that is not a message is refused as notAStanza")
    func messageWrongElement() {
        #expect(throws: StanzaParseError.notAStanza("presence")) {
            try Message(element: XMLElement(name: "presence", namespace: XMPPNamespace.client))
        }
        #expect(throws: StanzaParseError.notAStanza("message")) {
            try Message(element: XMLElement(name: "message", namespace: "jabber:server"))
        }
    }

    // MARK: - Presence

    @Test("show, status and priority are read")
    func presenceFields() throws {
        let presence = try Presence(
            element: Self.stanza(
                "<presence from='juliet@capulet.example/balcony' id='p1'><show>dnd</show><status>In a meeting &amp; busy 会議中</status><priority>5</priority><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='n' ver='v'/></presence>"
            )
        )
        #expect(presence.type == .available)
        #expect(presence.show == .dnd)
        #expect(presence.status == "In a meeting & busy 会議中")
        #expect(presence.priority == 5)
        #expect(presence.header.id == "p1")
        #expect(presence.extensions.map(\.name) == ["c"])
        #expect(presence.extensions.first?.namespace == "http://jabber.org/protocol/caps")
    }

    @Test("every show value is read and written", arguments: Presence.Show.allCases)
    func presenceShow(show: Presence.Show) throws {
        let parsed = try Presence(element: Self.stanza("<presence from='juliet@capulet.example/balcony'><show>\(show.rawValue)</show></presence>"))
        #expect(parsed.show == show)
        let built = Presence(show: show)
        #expect(built.element.firstChild(named: "show")?.text == show.rawValue)
        #expect(try Presence(element: Self.reparsed(built.element)) == built)
    }

    @Test("an unknown show value reads as none")
    func presenceUnknownShow() throws {
        let presence = try Presence(element: Self.stanza("<presence from='juliet@capulet.example/balcony'><show>sleeping</show></presence>"))
        #expect(presence.show == nil)
        #expect(presence.type == .available)
    }

    @Test(
        "priority is -128…127; anything else reads as 0 (RFC 6121 §4.7.2.3)",
        arguments: [
            ("0", 0), ("1", 1), ("-1", -1), ("127", 127), ("-128", -128), (" 7 ", 7), ("+3", 3),
            ("128", 0), ("-129", 0), ("1000", 0), ("99999999999999999999", 0), ("abc", 0), ("", 0), ("1.5", 0),
        ] as [(String, Int8)]
    )
    func presencePriority(raw: String, expected: Int8) throws {
        let presence = try Presence(element: Self.stanza("<presence from='juliet@capulet.example/balcony'><priority>\(raw)</priority></presence>"))
        #expect(presence.priority == expected)
        #expect(presence.extensions.isEmpty)
    }

    @Test("a built presence reads back identically; priority 0 and available are written as absent")
    func presenceRoundTrip() throws {
        for status in Self.awkwardTexts {
            let presence = Presence(type: .available, to: try Self.jid("romeo@montague.example"), show: .away, status: status, priority: -5)
            #expect(try Presence(element: Self.reparsed(presence.element)) == presence)
        }
        let plain = Presence().element
        #expect(plain.attributes.isEmpty)
        #expect(plain.children.isEmpty)
    }

    @Test(
        "every presence type but 'available' is read from its type attribute",
        arguments: Presence.Kind.allCases.filter { $0 != .available }
    )
    func presenceTypes(kind: Presence.Kind) throws {
        let presence = try Presence(element: Self.stanza("<presence from='juliet@capulet.example' type='\(kind.rawValue)'/>"))
        #expect(presence.type == kind)
        #expect(presence.element[attribute: "type"] == kind.rawValue)
    }

    @Test("no type attribute means available")
    func presenceAvailable() throws {
        let presence = try Presence(element: Self.stanza("<presence from='juliet@capulet.example/balcony'/>"))
        #expect(presence.type == .available)
        #expect(presence.element[attribute: "type"] == nil)
    }

    @Test("an explicit type='available' or an unknown type is invalidType", arguments: ["available", "bogus", "", "Unavailable"])
    func presenceInvalidType(raw: String) throws {
        let element = try Self.stanza("<presence from='juliet@capulet.example' type='\(raw)'/>")
        #expect(throws: StanzaParseError.invalidType(raw)) { try Presence(element: element) }
        #expect(StanzaParseError.invalidType(raw).stanzaError == StanzaError(.badRequest, type: .modify))
    }

    // MARK: - IQ

    @Test("an iq without id, or with an empty one, is missingID (RFC 6120 §8.2.3)", arguments: ["", " id=''"])
    func iqMissingID(idAttribute: String) throws {
        let element = try Self.stanza("<iq from='juliet@capulet.example/balcony' type='get'\(idAttribute)><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(throws: StanzaParseError.missingID) { try IQ(element: element) }
        #expect(StanzaParseError.missingID.stanzaError == StanzaError(.badRequest))
    }

    @Test(
        "an iq get or set must carry exactly one payload",
        arguments: [
            "<iq type='get' id='g0'/>",
            "<iq type='get' id='g2'><ping xmlns='urn:xmpp:ping'/><query xmlns='jabber:iq:version'/></iq>",
            "<iq type='set' id='s0'></iq>",
            "<iq type='set' id='s2'><query xmlns='jabber:iq:roster'/><query xmlns='jabber:iq:roster'/></iq>",
        ]
    )
    func iqPayloadCount(xml: String) throws {
        let element = try Self.stanza(xml)
        #expect(throws: StanzaParseError.invalidPayload) { try IQ(element: element) }
    }

    @Test("an iq result may have no payload or one")
    func iqResultPayload() throws {
        let empty = try IQ(element: Self.stanza("<iq from='example.org' type='result' id='r0'/>"))
        #expect(empty.type == .result)
        #expect(empty.payload == nil)
        #expect(empty.id == "r0")
        let full = try IQ(element: Self.stanza("<iq from='example.org' type='result' id='r1'><query xmlns='jabber:iq:roster' ver='v1'/></iq>"))
        #expect(full.payload == XMLElement(name: "query", namespace: "jabber:iq:roster", attributes: [XMLAttribute(name: "ver", value: "v1")]))
    }

    @Test("an iq with a missing or unknown type is invalidType", arguments: [(nil, ""), ("bogus", "bogus"), ("GET", "GET")] as [(String?, String)])
    func iqInvalidType(raw: String?, reported: String) throws {
        let typeAttribute = raw.map { " type='\($0)'" } ?? ""
        let element = try Self.stanza("<iq id='t1'\(typeAttribute)><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(throws: StanzaParseError.invalidType(reported)) { try IQ(element: element) }
    }

    @Test("an invalid from or to JID is invalidAddress, answered with jid-malformed", arguments: ["from", "to"])
    func iqInvalidAddress(attribute: String) throws {
        let bad = "juliet@"
        #expect((try? JID(bad)) == nil)
        let element = try Self.stanza("<iq \(attribute)='\(bad)' type='get' id='a1'><ping xmlns='urn:xmpp:ping'/></iq>")
        do {
            _ = try IQ(element: element)
            Issue.record("an invalid \(attribute) was accepted")
        } catch {
            guard case .invalidAddress(let reportedAttribute, let value, _) = error else {
                Issue.record("expected invalidAddress, got \(error)")
                return
            }
            #expect(reportedAttribute == attribute)
            #expect(value == bad)
            #expect(error.stanzaError.condition == .jidMalformed)
            #expect(error.stanzaError == StanzaError(.jidMalformed, type: .modify))
        }
    }

    @Test("an iq error carries the original payload and the parsed stanza error")
    func iqErrorParse() throws {
        let iq = try IQ(
            element: Self.stanza(
                """
                <iq from='romeo@montague.example/home' type='error' id='e7'><query xmlns='jabber:iq:version'/>\
                <error type='cancel' by='montague.example'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
                <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas' xml:lang='en'>no such thing</text></error></iq>
                """
            )
        )
        #expect(iq.type == .error)
        #expect(iq.id == "e7")
        #expect(iq.payload == XMLElement(name: "query", namespace: "jabber:iq:version"))
        #expect(iq.error == StanzaError(.itemNotFound, type: .cancel, text: "no such thing", by: "montague.example"))
    }

    @Test("an iq error without <error/> is undefined-condition")
    func iqErrorWithoutErrorChild() throws {
        let iq = try IQ(element: Self.stanza("<iq from='romeo@montague.example/home' type='error' id='e8'/>"))
        #expect(iq.error == StanzaError(.undefinedCondition, type: .cancel))
    }

    @Test("result() answers the sender with the same id, no from, and the given payload")
    func iqResult() throws {
        let request = try IQ(
            element: Self.stanza("<iq from='juliet@capulet.example/balcony' to='romeo@montague.example/home' type='get' id='q1' xml:lang='it'><query xmlns='jabber:iq:version'/></iq>")
        )
        let empty = request.result()
        #expect(empty.type == .result)
        #expect(empty.id == "q1")
        #expect(empty.to == (try Self.jid("juliet@capulet.example/balcony")))
        #expect(empty.from == nil)
        #expect(empty.payload == nil)
        #expect(empty.header.language == nil)
        #expect(
            normalized(empty.element)
                == normalized(try Self.stanza("<iq to='juliet@capulet.example/balcony' type='result' id='q1'/>"))
        )

        let payload = XMLElement(name: "query", namespace: "jabber:iq:version")
        let full = request.result(payload: payload)
        #expect(full.payload == payload)
        #expect(try IQ(element: Self.reparsed(full.element)) == full)
    }

    @Test("errorReply() answers the sender with the same id, the request's payload and the error")
    func iqErrorReply() throws {
        let request = try IQ(
            element: Self.stanza("<iq from='juliet@capulet.example/balcony' type='set' id='q2'><query xmlns='jabber:iq:private'><x/></query></iq>")
        )
        let reply = request.errorReply(StanzaError(.serviceUnavailable))
        #expect(reply.type == .error)
        #expect(reply.id == "q2")
        #expect(reply.to == (try Self.jid("juliet@capulet.example/balcony")))
        #expect(reply.from == nil)
        #expect(reply.payload == request.payload)
        #expect(reply.error == StanzaError(.serviceUnavailable, type: .cancel))
        #expect(
            normalized(reply.element)
                == normalized(
                    try Self.stanza(
                        """
                        <iq to='juliet@capulet.example/balcony' type='error' id='q2'><query xmlns='jabber:iq:private'><x/></query>\
                        <error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
                        """
                    )
                )
        )
        #expect(try IQ(element: Self.reparsed(reply.element)) == reply)
    }

    @Test("a request without from is answered without to")
    func iqReplyToServer() throws {
        let request = try IQ(element: Self.stanza("<iq type='get' id='s1'><ping xmlns='urn:xmpp:ping'/></iq>"))
        #expect(request.result().to == nil)
        #expect(request.result().element[attribute: "to"] == nil)
        #expect(request.errorReply(StanzaError(.badRequest)).element[attribute: "to"] == nil)
    }

    @Test("unknown attributes of a stanza are kept on rebuild")
    func otherAttributesKept() throws {
        let element = try Self.stanza("<iq type='get' id='o1' xmlns:foo='urn:foo' foo:bar='baz'><ping xmlns='urn:xmpp:ping'/></iq>")
        let iq = try IQ(element: element)
        #expect(Set(iq.element.attributes) == Set(element.attributes))
    }

    // MARK: - StanzaError

    @Test("a stanza error's type, condition, text and by are read")
    func stanzaErrorParse() throws {
        let element = try Self.stanza(
            """
            <message from='example.org' type='error'><error type='wait' by='example.org'>\
            <resource-constraint xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>slow down &amp; retry 🐢</text>\
            <too-many xmlns='urn:example:app'/></error></message>
            """
        )
        let error = try #require(StanzaError(stanza: element))
        #expect(error.type == .wait)
        #expect(error.condition == .resourceConstraint)
        #expect(error.text == "slow down & retry 🐢")
        #expect(error.by == "example.org")
        #expect(error.description == "wait/resource-constraint (slow down & retry 🐢)")
    }

    @Test("an unknown condition is undefined-condition; a missing type is the condition's default")
    func stanzaErrorFallbacks() throws {
        let unknown = try Self.stanza(
            "<message from='example.org' type='error'><error type='modify'><made-up xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>"
        )
        #expect(StanzaError(stanza: unknown) == StanzaError(.undefinedCondition, type: .modify))
        let untyped = try Self.stanza(
            "<message from='example.org' type='error'><error><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>"
        )
        #expect(StanzaError(stanza: untyped) == StanzaError(.forbidden, type: .auth))
        let badType = try Self.stanza(
            "<message from='example.org' type='error'><error type='panic'><gone xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>"
        )
        #expect(StanzaError(stanza: badType) == StanzaError(.gone, type: .modify))
        #expect(StanzaError(stanza: try Self.stanza("<message from='example.org' type='error'/>")) == nil)
    }

    @Test("every condition survives build → text → parse, with type, text and by", arguments: StanzaError.Condition.allCases)
    func stanzaErrorRoundTrip(condition: StanzaError.Condition) throws {
        for type in StanzaError.ErrorType.allCases {
            let error = StanzaError(condition, type: type, text: "why: <\(condition.rawValue)> & 理由", by: "capulet.example")
            var message = Message(type: .error, to: try Self.jid("juliet@capulet.example"), id: "err-\(condition.rawValue)")
            message.error = error
            let parsed = try Message(element: Self.reparsed(message.element))
            #expect(parsed.error == error)
            #expect(parsed == message)
        }
        let bare = StanzaError(condition)
        #expect(bare.type == condition.defaultType)
        #expect(StanzaError(stanza: XMLElement(name: "iq", namespace: XMPPNamespace.client, children: [.element(bare.element)])) == bare)
        #expect(bare.element.elements == [XMLElement(name: condition.rawValue, namespace: XMPPNamespace.stanzas)])
        #expect(bare.element[attribute: "by"] == nil)
    }

    @Test("Condition lists the 22 defined conditions of RFC 6120 §8.3.3")
    func conditionsComplete() {
        #expect(StanzaError.Condition.allCases.count == 22)
        #expect(
            Set(StanzaError.Condition.allCases.map(\.rawValue)) == [
                "bad-request", "conflict", "feature-not-implemented", "forbidden", "gone", "internal-server-error",
                "item-not-found", "jid-malformed", "not-acceptable", "not-allowed", "not-authorized", "policy-violation",
                "recipient-unavailable", "redirect", "registration-required", "remote-server-not-found",
                "remote-server-timeout", "resource-constraint", "service-unavailable", "subscription-required",
                "undefined-condition", "unexpected-request",
            ]
        )
    }
}
