import NIOCore
import Testing

@testable import XMPP

@Suite("XML serializer")
struct XMLSerializerTests {
    private func roundTrip(_ element: XMLElement) throws -> XMLElement {
        var buffer = ByteBuffer()
        XMLSerializer.write(element, parentNamespace: "jabber:client", into: &buffer)
        let text = testStreamHeader + (buffer.readString(length: buffer.readableBytes) ?? "")
        let result = parseStream(text)
        if let error = result.error { throw error }
        return try #require(result.events.last?.element)
    }

    private func message(body: String, attribute: String = "x") -> XMLElement {
        var body0 = XMLElement(name: "body", namespace: "jabber:client")
        body0.append(text: body)
        return XMLElement(
            name: "message", namespace: "jabber:client",
            attributes: [XMLAttribute(name: "id", value: attribute), XMLAttribute(name: "xml:lang", value: "en")],
            children: [.element(body0)]
        )
    }

    @Test("escapes text and attributes", arguments: [
        "<&>\"'", "a]]>b", "😀 emoji", "中文 日本語 한국어", "tab\tnew\nline", "&amp; literally", "",
    ])
    func roundTripText(_ text: String) throws {
        let parsed = try self.roundTrip(self.message(body: text, attribute: text))
        #expect(parsed.firstChild(named: "body")?.text == text)
        #expect(parsed[attribute: "id"] == text)
    }

    @Test("exact escaping")
    func exactOutput() {
        var element = XMLElement(name: "a", namespace: "urn:x", attributes: [XMLAttribute(name: "v", value: "<&>\"'\t\n\r")])
        element.append(text: "<&>\"'\r")
        #expect(
            XMLSerializer.string(element)
                == "<a xmlns=\"urn:x\" v=\"&lt;&amp;&gt;&quot;&apos;&#9;&#10;&#13;\">&lt;&amp;&gt;\"'&#13;</a>"
        )
    }

    @Test("carriage returns survive the round trip")
    func carriageReturn() throws {
        let parsed = try self.roundTrip(self.message(body: "a\r\nb\rc", attribute: "x\ry"))
        #expect(parsed.firstChild(named: "body")?.text == "a\r\nb\rc")
        #expect(parsed[attribute: "id"] == "x\ry")
    }

    @Test("characters XML 1.0 forbids are dropped")
    func controlCharacters() throws {
        let dirty = "a\u{0}b\u{1B}[31mred\u{1B}[0m\u{7}\u{FFFE}\u{FFFF}c\u{FFFD}"
        let parsed = try self.roundTrip(self.message(body: dirty, attribute: dirty))
        #expect(parsed.firstChild(named: "body")?.text == "ab[31mred[0mc\u{FFFD}")
        #expect(parsed[attribute: "id"] == "ab[31mred[0mc\u{FFFD}")
    }

    @Test("xmlns is written only where the namespace changes")
    func namespaces() {
        var message = XMLElement(name: "message", namespace: "jabber:client")
        message.append(XMLElement(name: "body", namespace: "jabber:client"))
        message.append(XMLElement(name: "active", namespace: "http://jabber.org/protocol/chatstates"))
        #expect(
            XMLSerializer.string(message, parentNamespace: "jabber:client")
                == "<message><body/><active xmlns=\"http://jabber.org/protocol/chatstates\"/></message>"
        )
    }

    @Test("a parsed stanza with prefixed extensions survives re-serialisation")
    func unknownExtensionsRoundTrip() throws {
        let text = testStreamHeader
            + "<message id='1'><x:data xmlns:x='urn:example' x:a='1' plain='2'><x:item>v</x:item><other xmlns='urn:o'/></x:data></message>"
        let original = try #require(parseStream(text).events.last?.element)
        let again = try self.roundTrip(original)
        #expect(again == original)
    }

    @Test("large bodies round-trip")
    func largeBody() throws {
        let body = String(repeating: "0123456789<&>ü", count: 8000)
        let parsed = try self.roundTrip(self.message(body: body))
        #expect(parsed.firstChild(named: "body")?.text == body)
    }

    @Test("stream header")
    func header() {
        var buffer = ByteBuffer()
        XMLSerializer.writeStreamHeader(to: "example.com", from: nil, language: "en", contentNamespace: "jabber:client", into: &buffer)
        let text = buffer.readString(length: buffer.readableBytes) ?? ""
        let result = parseStream(text)
        #expect(result.error == nil)
        guard case .streamOpened(let attributes) = result.events.first else {
            Issue.record("header did not parse")
            return
        }
        #expect(attributes.contains(XMLAttribute(name: "to", value: "example.com")))
        #expect(attributes.contains(XMLAttribute(name: "version", value: "1.0")))
        #expect(!attributes.contains(where: { $0.name == "from" }))
    }
}
