import NIOCore
import Testing

@testable import XMPP

/// The component handshake of XEP-0114 §3 as a pure machine, and its stream read byte by
/// byte with the component namespace read as `jabber:client`.
@Suite("ComponentNegotiationStateMachine")
struct ComponentNegotiationStateMachineTests {
    static func handshake(_ text: String) -> XMLElement {
        var element = XMLElement(name: "handshake", namespace: XMPPNamespace.client)
        element.append(text: text)
        return element
    }

    @Test("the digest is lowercase hex SHA-1 of stream id and secret (checked against sha1sum)")
    func digest() {
        // echo -n "3BF96D32secret" | sha1sum
        #expect(ComponentNegotiationStateMachine.handshakeDigest(streamID: "3BF96D32", secret: "secret") == "b09ea9b3b7f586be8a08d0a3dd7466f110aeb136")
    }

    @Test("connect, header with an id, handshake, empty handshake back: ready; then stanzas pass")
    func happyPath() {
        var machine = ComponentNegotiationStateMachine(secret: "secret")
        #expect(machine.connected() == .sendStreamHeader)
        #expect(machine.connected() == .none, "once")
        #expect(machine.streamOpened(attributes: [XMLAttribute(name: "id", value: "3BF96D32"), XMLAttribute(name: "from", value: "gw.example")])
            == .send(Self.handshake("b09ea9b3b7f586be8a08d0a3dd7466f110aeb136")))
        #expect(machine.elementReceived(XMLElement(name: "handshake", namespace: XMPPNamespace.client)) == .ready)
        #expect(machine.state == .ready)
        let message = XMLElement(name: "message", namespace: XMPPNamespace.client)
        #expect(machine.elementReceived(message) == .emit(message))
        #expect(machine.closeRequested() == .sendStreamClose)
        #expect(machine.streamClosed() == .finish)
    }

    @Test("a header without an id cannot be answered: invalid-xml, closed")
    func headerWithoutID() {
        var machine = ComponentNegotiationStateMachine(secret: "secret")
        _ = machine.connected()
        #expect(machine.streamOpened(attributes: []) == .closeWithStreamError(.invalidXML, .unexpectedElement("stream header without an id")))
    }

    @Test("a wrong secret: the server's not-authorized ends it with that error (permanent for the reconnect machine)")
    func wrongSecret() {
        var machine = ComponentNegotiationStateMachine(secret: "wrong")
        _ = machine.connected()
        _ = machine.streamOpened(attributes: [XMLAttribute(name: "id", value: "1")])
        var error = XMLElement(name: "error", namespace: XMPPNamespace.stream)
        error.append(XMLElement(name: "not-authorized", namespace: XMPPNamespace.streamErrors))
        let expected = XMPPClientError.streamError(condition: .notAuthorized, text: nil)
        #expect(machine.elementReceived(error) == .close(expected))
        #expect(machine.state == .failed(expected))
        #expect(ReconnectStateMachine<ContinuousClock>.isPermanent(expected))
        #expect(machine.elementReceived(error) == .none, "once")
    }

    @Test("anything but a handshake before ready, a second header, a timeout or an early close all end the stream")
    func failures() {
        var early = ComponentNegotiationStateMachine(secret: "s")
        _ = early.connected()
        _ = early.streamOpened(attributes: [XMLAttribute(name: "id", value: "1")])
        #expect(early.elementReceived(XMLElement(name: "message", namespace: XMPPNamespace.client)) == .closeWithStreamError(.notAuthorized, .unexpectedElement("message")))

        var twice = ComponentNegotiationStateMachine(secret: "s")
        _ = twice.connected()
        _ = twice.streamOpened(attributes: [XMLAttribute(name: "id", value: "1")])
        #expect(twice.streamOpened(attributes: [XMLAttribute(name: "id", value: "2")]) == .closeWithStreamError(.notAuthorized, .unexpectedElement("second stream header")))

        var slow = ComponentNegotiationStateMachine(secret: "s")
        _ = slow.connected()
        #expect(slow.timedOut() == .closeWithStreamError(.connectionTimeout, .timedOut("component handshake")))

        var closed = ComponentNegotiationStateMachine(secret: "s")
        _ = closed.connected()
        #expect(closed.streamClosed() == .close(.closedByServer))

        var ready = ComponentNegotiationStateMachine(secret: "s")
        _ = ready.connected()
        _ = ready.streamOpened(attributes: [XMLAttribute(name: "id", value: "1")])
        _ = ready.elementReceived(Self.handshake(""))
        #expect(ready.timedOut() == .none, "no timeout once ready")
        #expect(ready.decodingFailed(XMLStreamError(.notWellFormed, "x")) == .closeWithStreamError(.notWellFormed, .invalidServerXML(XMLStreamError(.notWellFormed, "x"))))
    }

    @Test("a component stream read byte by byte: stanzas in jabber:component:accept come out in jabber:client, children in other namespaces keep theirs")
    func namespaceAliasByteByByte() throws {
        let parser = XMLStreamParser(namespaceAlias: (XMPPNamespace.componentAccept, XMPPNamespace.client))
        let input = "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' id='x1' from='gw.example'>"
            + "<handshake/><message to='bob\\40home@gw.example' from='alice@work.example' id='m1'><body>hi &amp; bye</body><request xmlns='urn:xmpp:receipts'/></message>"
        var events: [XMLStreamEvent] = []
        for byte in Array(input.utf8) {
            try parser.feed(ByteBuffer(bytes: [byte]), into: &events)
        }
        let elements = events.compactMap { event -> XMLElement? in
            if case .element(let element) = event { return element }
            return nil
        }
        #expect(elements.map(\.namespace) == [XMPPNamespace.client, XMPPNamespace.client])
        let message = try Message(element: elements[1])
        #expect(message.body == "hi & bye")
        #expect(message.to?.localpart == "bob\\40home")
        #expect(message.extensions.first?.namespace == "urn:xmpp:receipts")
    }

    @Test("stanzas written for a component stream carry no xmlns: they take the stream's")
    func serializedForTheStream() {
        var buffer = ByteBuffer()
        var message = Message(type: .chat, to: try? JID("alice@work.example"), id: "1", body: "x")
        message.header.from = try? JID("bob\\40home@gw.example")
        XMLSerializer.write(message.element, parentNamespace: XMPPNamespace.client, into: &buffer)
        let text = String(buffer: buffer)
        #expect(text.hasPrefix("<message "), "\(text)")
        #expect(!text.contains("jabber:client"))
        var header = ByteBuffer()
        XMLSerializer.writeComponentStreamHeader(to: "gw.example", into: &header)
        #expect(String(buffer: header) == "<?xml version='1.0'?><stream:stream xmlns=\"jabber:component:accept\" xmlns:stream=\"http://etherx.jabber.org/streams\" to=\"gw.example\">")
    }
}
