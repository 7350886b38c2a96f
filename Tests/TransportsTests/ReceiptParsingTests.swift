import Testing
import TransportCore
import XMPP

@testable import AccountTransport

/// Delivery receipts (XEP-0184 §5.2 `<received/>`) and displayed markers (XEP-0333 §4
/// `<displayed/>`) in bodyless 1:1 messages, and the JSON line local subscribers get.
@Suite("Receipt parsing")
struct ReceiptParsingTests {
    static let receipts = "urn:xmpp:receipts"
    static let markers = "urn:xmpp:chat-markers:0"

    static func element(_ name: String, _ namespace: String, id: String? = nil) -> XMLElement {
        XMLElement(name: name, namespace: namespace, attributes: id.map { [XMLAttribute(name: "id", value: $0)] } ?? [])
    }

    /// A message from `from` carrying `extensions`, built from its XML element the way
    /// the stream delivers it.
    static func message(
        type: String? = "chat", from: String? = "Alice@Example.org/phone", body: String? = nil, _ extensions: [XMLElement]
    ) throws -> Message {
        var attributes: [XMLAttribute] = []
        if let type { attributes.append(XMLAttribute(name: "type", value: type)) }
        if let from { attributes.append(XMLAttribute(name: "from", value: from)) }
        attributes.append(XMLAttribute(name: "to", value: "bridge@example.org/bridge"))
        attributes.append(XMLAttribute(name: "id", value: "incoming-1"))
        var children: [XMLNode] = []
        if let body { children.append(.element(XMLElement(name: "body", namespace: XMPPNamespace.client, children: body.isEmpty ? [] : [.text(body)]))) }
        children += extensions.map { .element($0) }
        return try Message(element: XMLElement(name: "message", namespace: XMPPNamespace.client, attributes: attributes, children: children))
    }

    static func receipt(_ message: Message) -> DeliveryReceipt? {
        XMPPTransport.receipt(in: message, account: "work")
    }

    static let alice = Endpoint(transport: "work", address: "alice@example.org")

    // MARK: - Recognised

    @Test("a delivery receipt names our id and the sender's bare JID (lower-cased)")
    func deliveryReceipt() throws {
        let message = try Self.message([Self.element("received", Self.receipts, id: "relay-1")])
        #expect(Self.receipt(message) == DeliveryReceipt(relayID: "relay-1", from: Self.alice, displayed: false))
    }

    @Test("a displayed marker is a receipt with displayed set")
    func displayedMarker() throws {
        let message = try Self.message([Self.element("displayed", Self.markers, id: "relay-2")])
        #expect(Self.receipt(message) == DeliveryReceipt(relayID: "relay-2", from: Self.alice, displayed: true))
    }

    @Test("chat, normal, headline and a missing type are all 1:1", arguments: ["chat", "normal", "headline", nil] as [String?])
    func types(type: String?) throws {
        let message = try Self.message(type: type, [Self.element("received", Self.receipts, id: "r")])
        #expect(Self.receipt(message)?.relayID == "r")
    }

    @Test("other extensions before the receipt are skipped; the first receipt counts")
    func skipsOthers() throws {
        let message = try Self.message([
            Self.element("active", "http://jabber.org/protocol/chatstates"),
            Self.element("received", Self.markers, id: "marker-received"),  // XEP-0333 <received/>: not a receipt here
            Self.element("received", Self.receipts),  // no id
            Self.element("displayed", Self.markers, id: ""),  // empty id
            Self.element("displayed", Self.markers, id: "d-1"),
            Self.element("received", Self.receipts, id: "r-1"),
        ])
        #expect(Self.receipt(message) == DeliveryReceipt(relayID: "d-1", from: Self.alice, displayed: true))
    }

    @Test("a bare sender JID works as well")
    func bareSender() throws {
        let message = try Self.message(from: "bob@example.net", [Self.element("received", Self.receipts, id: "x")])
        #expect(Self.receipt(message)?.from == Endpoint(transport: "work", address: "bob@example.net"))
    }

    // MARK: - Ignored

    @Test("groupchat and error messages are ignored", arguments: ["groupchat", "error"])
    func ignoredTypes(type: String) throws {
        let message = try Self.message(type: type, [Self.element("received", Self.receipts, id: "r"), Self.element("displayed", Self.markers, id: "d")])
        #expect(Self.receipt(message) == nil)
    }

    @Test("a message with a body is a message, not a receipt")
    func withBody() throws {
        let message = try Self.message(body: "thanks", [Self.element("received", Self.receipts, id: "r")])
        #expect(message.body == "thanks")
        #expect(Self.receipt(message) == nil)
    }

    @Test("an empty <body/> still counts as a body")
    func emptyBody() throws {
        let message = try Self.message(body: "", [Self.element("received", Self.receipts, id: "r")])
        #expect(message.body == "")
        #expect(Self.receipt(message) == nil)
    }

    @Test("no sender, no receipt")
    func noSender() throws {
        let message = try Self.message(from: nil, [Self.element("received", Self.receipts, id: "r")])
        #expect(Self.receipt(message) == nil)
    }

    @Test(
        "wrong names, wrong namespaces, missing or empty ids are not receipts",
        arguments: [
            ("received", "urn:xmpp:chat-markers:0", "r"),
            ("acknowledged", "urn:xmpp:chat-markers:0", "r"),
            ("displayed", "urn:xmpp:receipts", "r"),
            ("request", "urn:xmpp:receipts", "r"),
            ("markable", "urn:xmpp:chat-markers:0", "r"),
            ("received", "urn:xmpp:receipts:1", "r"),
            ("received", "", "r"),
            ("received", "urn:xmpp:receipts", ""),
            ("displayed", "urn:xmpp:chat-markers:0", ""),
        ]
    )
    func notReceipts(name: String, namespace: String, id: String) throws {
        let message = try Self.message([Self.element(name, namespace, id: id)])
        #expect(Self.receipt(message) == nil)
    }

    @Test("no extensions at all: nil")
    func nothing() throws {
        #expect(Self.receipt(try Self.message([])) == nil)
    }

    // MARK: - JSON line

    @Test("jsonLine names the channel, the source's id, the target and the status")
    func jsonLine() {
        var receipt = DeliveryReceipt(relayID: "relay-1", from: Self.alice, displayed: true)
        receipt.channel = "alerts"
        receipt.source = Endpoint(transport: "web")
        receipt.sourceID = "web-key-K"
        #expect(receipt.jsonLine == #"{"channel":"alerts","event":"receipt","id":"web-key-K","status":"displayed","target":"work:alice@example.org"}"#)
    }

    @Test("jsonLine without the bridge's fill-in uses our relay id and an empty channel")
    func jsonLineBare() {
        let receipt = DeliveryReceipt(relayID: "relay-1", from: Self.alice, displayed: false)
        #expect(receipt.jsonLine == #"{"channel":"","event":"receipt","id":"relay-1","status":"received","target":"work:alice@example.org"}"#)
    }
}
