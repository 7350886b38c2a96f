import Testing

@testable import XMPP

/// Finding an HTTP File Upload service (XEP-0363 §3) in disco#info and disco#items
/// results (XEP-0030 §3, §4; XEP-0128 forms), from XML text as the stream delivers it.
@Suite("Upload service discovery")
struct UploadServiceTests {
    static func iq(_ xml: String) throws -> IQ {
        try IQ(element: StanzaTests.stanza(xml))
    }

    static let component = try! JID("upload.example.org")

    /// The disco#info result of XEP-0363 §3 (Example 4), with a server-info form before it.
    static let infoWithLimit = """
        <iq from='upload.example.org' id='d1' to='alice@example.org/r' type='result'>\
        <query xmlns='http://jabber.org/protocol/disco#info'>\
        <identity category='store' type='file' name='HTTP File Upload'/>\
        <feature var='http://jabber.org/protocol/disco#info'/>\
        <feature var='urn:xmpp:http:upload:0'/>\
        <x type='result' xmlns='jabber:x:data'>\
        <field var='FORM_TYPE' type='hidden'><value>http://jabber.org/network/serverinfo</value></field>\
        <field var='max-file-size'><value>999</value></field>\
        </x>\
        <x type='result' xmlns='jabber:x:data'>\
        <field var='FORM_TYPE' type='hidden'><value>urn:xmpp:http:upload:0</value></field>\
        <field var='max-file-size'><value> 5242880 </value></field>\
        </x>\
        </query></iq>
        """

    @Test("a service with max-file-size: the value of the XEP-0363 form only, not another form's field of the same name")
    func serviceWithLimit() throws {
        let service = try #require(UploadService(jid: Self.component, discoInfoResult: Self.iq(Self.infoWithLimit)))
        #expect(service == UploadService(jid: Self.component, maxFileSize: 5_242_880))
        #expect(service.accepts(size: 5_242_880))
        #expect(!service.accepts(size: 5_242_881))
    }

    @Test("a service without a form has no limit, and accepts any size")
    func serviceWithoutLimit() throws {
        let answer = try Self.iq(
            """
            <iq from='upload.example.org' id='d1' type='result'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='store' type='file'/><feature var='urn:xmpp:http:upload:0'/></query></iq>
            """
        )
        let service = try #require(UploadService(jid: Self.component, discoInfoResult: answer))
        #expect(service.maxFileSize == nil)
        #expect(service.accepts(size: Int.max))
    }

    @Test("max-file-size that is no non-negative integer counts as no limit", arguments: ["", "-1", "12a", "+5", "1e6", "99999999999999999999"])
    func malformedLimit(value: String) throws {
        let answer = try Self.iq(
            """
            <iq from='upload.example.org' id='d1' type='result'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <feature var='urn:xmpp:http:upload:0'/><x type='result' xmlns='jabber:x:data'>\
            <field var='FORM_TYPE' type='hidden'><value>urn:xmpp:http:upload:0</value></field>\
            <field var='max-file-size'><value>\(value)</value></field></x></query></iq>
            """
        )
        #expect(UploadService(jid: Self.component, discoInfoResult: answer) == UploadService(jid: Self.component, maxFileSize: nil))
    }

    @Test("no feature, no service: a server with only the identity, another feature, or an error answer")
    func notAService() throws {
        let identityOnly = try Self.iq(
            """
            <iq from='example.org' id='d1' type='result'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='store' type='file'/><feature var='urn:xmpp:http:upload'/></query></iq>
            """
        )
        #expect(UploadService(jid: Self.component, discoInfoResult: identityOnly) == nil)
        let server = try Self.iq(
            """
            <iq from='example.org' id='d1' type='result'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='server' type='im'/><feature var='urn:xmpp:ping'/></query></iq>
            """
        )
        #expect(UploadService(jid: Self.component, discoInfoResult: server) == nil)
        let refused = try Self.iq(
            """
            <iq from='example.org' id='d1' type='error'><query xmlns='http://jabber.org/protocol/disco#info'/>\
            <error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
            """
        )
        #expect(UploadService(jid: Self.component, discoInfoResult: refused) == nil)
        let wrongNamespace = try Self.iq(
            "<iq from='example.org' id='d1' type='result'><query xmlns='http://jabber.org/protocol/disco#items'><feature var='urn:xmpp:http:upload:0'/></query></iq>"
        )
        #expect(UploadService(jid: Self.component, discoInfoResult: wrongNamespace) == nil)
    }

    @Test("disco#info reads identities, features and forms by FORM_TYPE; the first form of a type counts")
    func discoInfo() throws {
        let info = try #require(ServiceDiscovery.Info(result: Self.iq(Self.infoWithLimit)))
        #expect(info.identities == [ServiceDiscovery.Info.Identity(category: "store", type: "file")])
        #expect(info.features == ["http://jabber.org/protocol/disco#info", "urn:xmpp:http:upload:0"])
        #expect(info.forms["http://jabber.org/network/serverinfo"] == ["max-file-size": ["999"]])
        #expect(info.forms["urn:xmpp:http:upload:0"] == ["max-file-size": [" 5242880 "]])
    }

    @Test("the service on a component: disco#items lists entities in order, without nodes, repeats or invalid JIDs, up to the limit")
    func itemsOfServer() throws {
        let listing = try Self.iq(
            """
            <iq from='example.org' id='d2' type='result'><query xmlns='http://jabber.org/protocol/disco#items'>\
            <item jid='conference.example.org' name='Chatrooms'/>\
            <item jid='example.org' node='http://jabber.org/protocol/commands'/>\
            <item jid='upload.example.org' name='HTTP File Upload'/>\
            <item jid='conference.example.org'/>\
            <item jid='@bad'/>\
            <item name='no jid'/>\
            <item jid='pubsub.example.org'/>\
            </query></iq>
            """
        )
        #expect(ServiceDiscovery.items(in: listing, limit: 10).map(\.description) == ["conference.example.org", "upload.example.org", "pubsub.example.org"])
        #expect(ServiceDiscovery.items(in: listing, limit: 2).map(\.description) == ["conference.example.org", "upload.example.org"])
        let component = try #require(UploadService(jid: ServiceDiscovery.items(in: listing, limit: 10)[1], discoInfoResult: Self.iq(Self.infoWithLimit)))
        #expect(component.jid == Self.component)
        let error = try Self.iq(
            "<iq from='example.org' id='d2' type='error'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        )
        #expect(ServiceDiscovery.items(in: error, limit: 10) == [])
    }

    @Test("disco requests are IQ gets with an empty query to the entity")
    func requests() throws {
        let info = ServiceDiscovery.infoRequest(id: "q1", to: Self.component)
        #expect(XMLSerializer.string(info.element, parentNamespace: XMPPNamespace.client) == "<iq to=\"upload.example.org\" type=\"get\" id=\"q1\"><query xmlns=\"http://jabber.org/protocol/disco#info\"/></iq>")
        let items = ServiceDiscovery.itemsRequest(id: "q2", to: try JID("example.org"))
        #expect(XMLSerializer.string(items.element, parentNamespace: XMPPNamespace.client) == "<iq to=\"example.org\" type=\"get\" id=\"q2\"><query xmlns=\"http://jabber.org/protocol/disco#items\"/></iq>")
    }
}
