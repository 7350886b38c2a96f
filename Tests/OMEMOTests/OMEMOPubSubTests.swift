import Testing
import XMPP

@testable import OMEMO

/// OMEMO's PEP traffic as XML (XEP-0384 v0.3 §4 over XEP-0060/0163): publishes with an open
/// access model, fetches, results and notifications read, and the message shape around
/// `<encrypted/>`.
@Suite("OMEMO PEP and message shape")
struct OMEMOPubSubTests {
    @Test("a device list publish: node, item current, the list, and publish options asking for an open access model")
    func publish() throws {
        let pubsub = OMEMOPubSub.publish(OMEMODeviceList([7, 3]))
        let publish = try #require(pubsub.firstChild(named: "publish", namespace: OMEMOPubSub.namespace))
        #expect(publish[attribute: "node"] == "eu.siacs.conversations.axolotl.devicelist")
        let list = try #require(publish.firstChild(named: "item", namespace: OMEMOPubSub.namespace)?.elements.first)
        #expect(try OMEMODeviceList(element: list, limit: 10).devices == [3, 7])
        let fields = pubsub.firstChild(named: "publish-options", namespace: OMEMOPubSub.namespace)?.firstChild(named: "x", namespace: "jabber:x:data")?.elements ?? []
        let access = fields.first { $0[attribute: "var"] == "pubsub#access_model" }
        #expect(access?.firstChild(named: "value", namespace: "jabber:x:data")?.text == "open")
        #expect(OMEMOPubSub.publish(OMEMODeviceList([1]), openAccess: false).firstChild(named: "publish-options", namespace: OMEMOPubSub.namespace) == nil)
    }

    @Test("a fetch asks for the newest item; a result's payload is read, an empty node is nil")
    func fetch() throws {
        let fetch = OMEMOPubSub.fetch(node: OMEMOWire.bundleNode(for: 42))
        let items = try #require(fetch.firstChild(named: "items", namespace: OMEMOPubSub.namespace))
        #expect(items[attribute: "node"] == "eu.siacs.conversations.axolotl.bundles:42")
        #expect(items[attribute: "max_items"] == "1")
        let result = try OMEMOElementsTests.element(
            "<pubsub xmlns='http://jabber.org/protocol/pubsub'><items node='eu.siacs.conversations.axolotl.devicelist'><item id='current'><list xmlns='eu.siacs.conversations.axolotl'><device id='5'/></list></item></items></pubsub>"
        )
        #expect(OMEMOPubSub.payload(ofResult: result)?.name == "list")
        #expect(OMEMOPubSub.payload(ofResult: try OMEMOElementsTests.element("<pubsub xmlns='http://jabber.org/protocol/pubsub'><items node='x'/></pubsub>")) == nil)
        #expect(OMEMOPubSub.payload(ofResult: nil) == nil)
    }

    @Test("a device list notification is read; a retraction is an empty list; another node's is none")
    func notices() throws {
        func message(_ items: String) throws -> Message {
            try Message(element: try OMEMOElementsTests.element("<message xmlns='jabber:client' from='bob@example.org' type='headline'><event xmlns='http://jabber.org/protocol/pubsub#event'>\(items)</event></message>"))
        }
        let list = try message("<items node='eu.siacs.conversations.axolotl.devicelist'><item id='current'><list xmlns='eu.siacs.conversations.axolotl'><device id='9'/></list></item></items>")
        guard case .list(let element) = OMEMOPubSub.deviceListNotice(in: list) else { Issue.record("no list"); return }
        #expect(try OMEMODeviceList(element: element, limit: 10).devices == [9])
        let retracted = try message("<items node='eu.siacs.conversations.axolotl.devicelist'><retract id='current'/></items>")
        #expect(OMEMOPubSub.deviceListNotice(in: retracted) == .cleared)
        #expect(OMEMOPubSub.deviceListNotice(in: try message("<items node='urn:xmpp:avatar:metadata'/>")) == nil)
        #expect(OMEMOPubSub.deviceListNotice(in: Message(type: .chat, body: "hi")) == nil)
    }

    @Test("sealed: the body becomes the fallback, the encryption, EME and store hints are added, everything else stays outside; opened: the text back, the encryption gone")
    func messageShape() throws {
        var message = Message(type: .chat, to: try JID("bob@example.org"), id: "m1", body: "secret")
        message.extensions.append(XMLElement(name: "origin-id", namespace: "urn:xmpp:sid:0", attributes: [XMLAttribute(name: "id", value: "m1")]))
        message.extensions.append(XMLElement(name: "request", namespace: "urn:xmpp:receipts"))
        let encrypted = OMEMOEncrypted(senderDevice: 1, keys: [.init(device: 2, startsSession: false, data: [1, 2, 3])], iv: Array(repeating: 0, count: 12), payload: [9])
        let sealed = OMEMOMessage.sealed(message, as: encrypted)
        #expect(sealed.body == OMEMOMessage.fallbackBody)
        #expect(!sealed.extensions.contains { $0.text.contains("secret") })
        let names = sealed.extensions.map(\.name)
        #expect(names.contains("origin-id") && names.contains("request") && names.contains("encrypted") && names.contains("encryption") && names.contains("store"))
        #expect(OMEMOMessage.encryptedElement(of: sealed).map { try? OMEMOEncrypted(element: $0) } == encrypted)
        let opened = OMEMOMessage.opened(sealed, plaintext: "secret")
        #expect(opened.body == "secret")
        #expect(OMEMOMessage.encryptedElement(of: opened) == nil)
        #expect(!opened.extensions.contains { $0.name == "encryption" })
        #expect(opened.extensions.contains { $0.name == "origin-id" })
        let transport = OMEMOMessage.keyTransport(to: try JID("bob@example.org"), id: "k1", OMEMOEncrypted(senderDevice: 1, keys: [], iv: [], payload: nil))
        #expect(transport.body == nil && transport.type == .chat)
        #expect(transport.extensions.contains { $0.name == "store" })
    }
}
