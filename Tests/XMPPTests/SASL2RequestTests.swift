import Testing

@testable import XMPP

/// SASL2's `<authenticate>` (XEP-0388 §2.3) byte by byte: alone, and with everything that
/// may ride along, in the order the request writes it.
@Suite("SASL2 request")
struct SASL2RequestTests {
    static let agent = SASL2Request.UserAgent(id: "d4565fa7-4d72-4749-b3d3-740edbf87770", software: "xmpp-bridge 0.1.0", device: "host-1")

    @Test("a SCRAM login: the client-first-message as initial response, plain base64")
    func scram() {
        let request = SASL2Request(mechanism: "SCRAM-SHA-256", initialResponse: Array("n,,n=user,r=rOprNGfwEbeRWgbNEkqO".utf8))
        #expect(
            XMLSerializer.string(request.element)
                == #"<authenticate xmlns="urn:xmpp:sasl:2" mechanism="SCRAM-SHA-256"><initial-response>biwsbj11c2VyLHI9ck9wck5HZndFYmVSV2diTkVrcU8=</initial-response></authenticate>"#
        )
    }

    @Test("everything inline: user agent, resumption, Bind 2 with a tag and both enables, a token asked for")
    func everything() throws {
        let request = SASL2Request(
            mechanism: "SCRAM-SHA-256-PLUS", initialResponse: [], userAgent: Self.agent,
            resume: .init(previousID: "sm-1", handled: 17, jid: try JID("u@x.test/r")),
            bind: .init(tag: "xmpp-bridge", enableStreamManagement: true, enableCarbons: true), requestToken: "HT-SHA-256-EXPR"
        )
        #expect(
            XMLSerializer.string(request.element)
                == #"<authenticate xmlns="urn:xmpp:sasl:2" mechanism="SCRAM-SHA-256-PLUS"><initial-response></initial-response>"#
                + #"<user-agent id="d4565fa7-4d72-4749-b3d3-740edbf87770"><software>xmpp-bridge 0.1.0</software><device>host-1</device></user-agent>"#
                + #"<resume xmlns="urn:xmpp:sm:3" previd="sm-1" h="17"/>"#
                + #"<bind xmlns="urn:xmpp:bind:0"><tag>xmpp-bridge</tag><enable xmlns="urn:xmpp:sm:3" resume="true"/><enable xmlns="urn:xmpp:carbons:2"/></bind>"#
                + #"<request-token xmlns="urn:xmpp:fast:0" mechanism="HT-SHA-256-EXPR"/></authenticate>"#
        )
    }

    @Test("a FAST login: the hashed-token mechanism and <fast/>; a bind that enables nothing the server did not list")
    func fastLogin() {
        let request = SASL2Request(
            mechanism: "HT-SHA-256-NONE", initialResponse: [0x75, 0x00, 0x01], userAgent: SASL2Request.UserAgent(id: Self.agent.id),
            bind: .init(tag: nil, enableStreamManagement: false, enableCarbons: false), usesToken: true
        )
        #expect(
            XMLSerializer.string(request.element)
                == #"<authenticate xmlns="urn:xmpp:sasl:2" mechanism="HT-SHA-256-NONE"><initial-response>dQAB</initial-response>"#
                + #"<user-agent id="d4565fa7-4d72-4749-b3d3-740edbf87770"/><bind xmlns="urn:xmpp:bind:0"/><fast xmlns="urn:xmpp:fast:0"/></authenticate>"#
        )
    }

    @Test("stream management enabled in the bind without resumption when the session does not resume streams")
    func notResumable() {
        let request = SASL2Request(
            mechanism: "SCRAM-SHA-256", initialResponse: [], userAgent: SASL2Request.UserAgent(id: Self.agent.id),
            bind: .init(tag: nil, enableStreamManagement: true, resumable: false, enableCarbons: false)
        )
        #expect(XMLSerializer.string(request.element).contains(#"<bind xmlns="urn:xmpp:bind:0"><enable xmlns="urn:xmpp:sm:3"/></bind>"#))
    }
}
