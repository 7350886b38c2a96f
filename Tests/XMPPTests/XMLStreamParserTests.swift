import NIOCore
import Testing

@testable import XMPP

@Suite("XML stream parser")
struct XMLStreamParserTests {
    static let sample =
        testStreamHeader
        + "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>"
        + "<message type='chat' to='juliet@example.com' id='m1' xml:lang='en'><body>&lt;&amp;&gt;&quot;&apos; &#x263A; 😀 中文 日本語</body>"
        + "<ext:thing xmlns:ext='urn:example:ext' ext:attr='v'><ext:inner>x</ext:inner></ext:thing></message>"
        + " \n\t "
        + "<presence><show>away</show><status>a\r\nb</status></presence>"
        + "</stream:stream>"

    @Test("whole input and drip-fed input give the same events")
    func dripFeed() throws {
        let whole = parseStream(Self.sample)
        #expect(whole.error == nil)
        #expect(whole.events.count == 5)
        for size in [1, 2, 3, 7, 64] {
            let drip = parseStream(Self.sample, chunkSize: size)
            #expect(drip.error == nil, "chunk size \(size)")
            #expect(drip.events == whole.events, "chunk size \(size)")
        }
    }

    @Test("events carry the parsed tree")
    func tree() throws {
        let events = parseStream(Self.sample).events
        guard case .streamOpened(let attributes) = events[0] else {
            Issue.record("expected stream header, got \(events[0])")
            return
        }
        #expect(attributes.contains(XMLAttribute(name: "version", value: "1.0")))
        #expect(attributes.contains(XMLAttribute(name: "xml:lang", value: "en")))
        let features = try #require(events[1].element)
        #expect(features.name == "features")
        #expect(features.namespace == "http://etherx.jabber.org/streams")
        #expect(features.firstChild(named: "starttls")?.firstChild(named: "required") != nil)

        let message = try #require(events[2].element)
        #expect(message.namespace == "jabber:client")
        #expect(message[attribute: "xml:lang"] == "en")
        #expect(message.firstChild(named: "body")?.text == "<&>\"' ☺ 😀 中文 日本語")
        let thing = try #require(message.firstChild(named: "thing", namespace: "urn:example:ext"))
        #expect(thing[attribute: "ext:attr"] == "v")
        #expect(thing[attribute: "xmlns:ext"] == "urn:example:ext")
        #expect(thing.firstChild(named: "inner")?.text == "x")

        let presence = try #require(events[3].element)
        // XML end-of-line handling turns CR LF into LF.
        #expect(presence.firstChild(named: "status")?.text == "a\nb")
        #expect(events[4] == .streamClosed)
    }

    @Test("a multi-byte character split across feeds is decoded intact")
    func splitUTF8() throws {
        let text = testStreamHeader + "<message><body>😀</body></message>"
        var bytes = Array(text.utf8)
        let emojiStart = bytes.count - "😀</body></message>".utf8.count
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(bytes: bytes[..<(emojiStart + 2)]), into: &events)
        try parser.feed(ByteBuffer(bytes: bytes[(emojiStart + 2)...]), into: &events)
        #expect(events.last?.element?.firstChild(named: "body")?.text == "😀")
        bytes.removeAll()
    }

    static let restrictedProbes: [(String, String)] = [
        ("DOCTYPE with entity declaration", "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>&a;"),
        ("billion laughs", "<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\"><!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'><message><body>&lol3;</body></message>"),
        ("external entity", "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY ext SYSTEM \"file:///etc/passwd\">]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'><message><body>&ext;</body></message>"),
        ("processing instruction", testStreamHeader + "<?xml-stylesheet href='x.xsl'?><message/>"),
        ("comment between stanzas", testStreamHeader + "<message/><!-- c --><message/>"),
        ("comment inside a stanza", testStreamHeader + "<message><!-- c --></message>"),
        ("undeclared entity in text", testStreamHeader + "<message><body>&foo;</body></message>"),
        ("undeclared entity in an attribute", testStreamHeader + "<message to='&foo;'/>"),
    ]

    @Test("restricted XML is refused with restricted-xml, whole and drip-fed", arguments: restrictedProbes)
    func restrictedXML(_ probe: (String, String)) {
        for size in [nil, 1] as [Int?] {
            let result = parseStream(probe.1, chunkSize: size)
            #expect(result.error?.condition == .restrictedXML, "\(probe.0), chunk \(String(describing: size))")
            // No entity was ever expanded into content.
            for event in result.events {
                if let element = event.element {
                    let text = XMLSerializer.string(element)
                    #expect(!text.contains("aaaa") && !text.contains("lollol") && !text.contains("root:"))
                }
            }
        }
    }

    @Test("stanzas up to the limit pass; a larger one is a policy-violation")
    func stanzaSizeLimit() {
        let limits = XMLStreamLimits(maxStanzaBytes: 4096)
        let small = "<message><body>" + String(repeating: "a", count: 3000) + "</body></message>"
        let many = testStreamHeader + String(repeating: small, count: 50)
        #expect(parseStream(many, limits: limits).error == nil)
        #expect(parseStream(many, chunkSize: 100, limits: limits).events.count == 51)

        let big = testStreamHeader + "<message><body>" + String(repeating: "b", count: 10_000) + "</body></message>"
        for size in [nil, 1, 1000] as [Int?] {
            let result = parseStream(big, chunkSize: size, limits: limits)
            #expect(result.error?.condition == .policyViolation)
        }
    }

    @Test("an unterminated huge attribute value is cut off at the limit")
    func unterminatedAttribute() {
        let limits = XMLStreamLimits(maxStanzaBytes: 8192)
        let hostile = testStreamHeader + "<message to='" + String(repeating: "x", count: 100_000)
        #expect(parseStream(hostile, chunkSize: 4096, limits: limits).error?.condition == .policyViolation)
    }

    @Test("nesting deeper than the limit is a policy-violation")
    func depthLimit() {
        let limits = XMLStreamLimits(maxDepth: 10)
        let ok = testStreamHeader + String(repeating: "<a>", count: 9) + String(repeating: "</a>", count: 9)
        #expect(parseStream(ok, limits: limits).error == nil)
        let deep = testStreamHeader + String(repeating: "<a>", count: 10)
        #expect(parseStream(deep, limits: limits).error?.condition == .policyViolation)
        // Far beyond libxml2's own limit, drip-fed: still our clean error, no crash.
        let veryDeep = testStreamHeader + String(repeating: "<a>", count: 100_000)
        #expect(parseStream(veryDeep, chunkSize: 997).error?.condition == .policyViolation)
    }

    @Test("too many attributes is a policy-violation")
    func attributeLimit() {
        let attributes = (0..<70).map { "a\($0)='v'" }.joined(separator: " ")
        let text = testStreamHeader + "<message \(attributes)/>"
        #expect(parseStream(text).error?.condition == .policyViolation)
    }

    @Test("malformed XML is not-well-formed", arguments: [
        testStreamHeader + "<message><body></message>",
        testStreamHeader + "<message a='1' a='2'/>",
        testStreamHeader + "<message><body>a < b</body></message>",
        testStreamHeader + "<x:message/>",
        "<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'><message></stream:stream>",
    ])
    func malformed(_ text: String) {
        #expect(parseStream(text).error?.condition == .notWellFormed)
    }

    @Test("invalid UTF-8 is not-well-formed, even with a foreign encoding declaration")
    func invalidUTF8() {
        var bytes = Array((testStreamHeader + "<message><body>").utf8)
        bytes += [0xC3, 0x28, 0xFF]
        bytes += Array("</body></message>".utf8)
        #expect(parseStream(bytes).error?.condition == .notWellFormed)
        let latin1 = "<?xml version='1.0' encoding='ISO-8859-1'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'><message><body>é</body></message>"
        let result = parseStream(latin1)
        #expect(result.error == nil)
        #expect(result.events.last?.element?.firstChild(named: "body")?.text == "é")
    }

    @Test("text between stanzas is bad-format; whitespace is a keepalive")
    func textAtStreamLevel() {
        #expect(parseStream(testStreamHeader + " \n <message/> \n").error == nil)
        #expect(parseStream(testStreamHeader + "<message/>hello<message/>").error?.condition == .badFormat)
    }

    @Test("a root other than stream:stream is invalid-namespace")
    func wrongRoot() {
        #expect(parseStream("<html><body/></html>").error?.condition == .invalidNamespace)
        #expect(parseStream("<stream:stream xmlns:stream='urn:wrong'>").error?.condition == .invalidNamespace)
    }

    @Test("after an error the parser only repeats it")
    func stickyError() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        #expect(throws: XMLStreamError.self) {
            try parser.feed(ByteBuffer(string: testStreamHeader + "<!-- x -->"), into: &events)
        }
        #expect(parser.hasFailed)
        #expect(throws: XMLStreamError.self) {
            try parser.feed(ByteBuffer(string: "<message/>"), into: &events)
        }
        #expect(events.count == 1)
    }

    @Test("reset starts a new stream (RFC 6120 §4.3.3 restart)")
    func restart() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(string: testStreamHeader + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"), into: &events)
        #expect(events.count == 2)
        #expect(parser.bytesAfterLastElement == 0)
        parser.reset()
        events.removeAll()
        try parser.feed(ByteBuffer(string: testStreamHeader + "<stream:features/>"), into: &events)
        #expect(events.count == 2)
        if case .streamOpened = events[0] {} else { Issue.record("no new stream header") }
    }

    @Test("bytes after <proceed/> are visible, whether partial, an open element or consumed", arguments: [
        "<mess", "<message>", "<a><b>", " ", "<message/>",
    ])
    func bytesAfterProceed(_ trailing: String) throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(string: testStreamHeader + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"), into: &events)
        #expect(parser.bytesAfterLastElement == 0)
        try parser.feed(ByteBuffer(string: trailing), into: &events)
        #expect(parser.bytesAfterLastElement > 0 || events.count > 2)
    }

    @Test("an endless stream header is cut off at the stanza limit")
    func endlessHeader() {
        let limits = XMLStreamLimits(maxStanzaBytes: 8192)
        let hostile = "<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' a='" + String(repeating: "x", count: 1_000_000)
        for size in [nil, 1000] as [Int?] {
            #expect(parseStream(hostile, chunkSize: size, limits: limits).error?.condition == .policyViolation)
        }
    }

    @Test("the XML declaration is not a processing instruction; text with CDATA is text")
    func declarationAndCDATA() throws {
        let result = parseStream(testStreamHeader + "<message><body><![CDATA[<b>&]]></body></message>")
        #expect(result.error == nil)
        #expect(result.events.last?.element?.firstChild(named: "body")?.text == "<b>&")
    }
}
