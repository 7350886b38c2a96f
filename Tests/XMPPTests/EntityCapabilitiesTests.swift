import Testing

@testable import XMPP

@Suite("Entity capabilities")
struct EntityCapabilitiesTests {
    private let features = [
        "http://jabber.org/protocol/caps",
        "http://jabber.org/protocol/disco#info",
        "http://jabber.org/protocol/disco#items",
        "http://jabber.org/protocol/muc",
    ]

    @Test("XEP-0115 §5.2 simple example")
    func simpleVector() {
        let caps = EntityCapabilities(
            identities: [.init(category: "client", type: "pc", name: "Exodus 0.9.1")],
            features: self.features.reversed()
        )
        #expect(
            caps.verificationString
                == "client/pc//Exodus 0.9.1<http://jabber.org/protocol/caps<http://jabber.org/protocol/disco#info<http://jabber.org/protocol/disco#items<http://jabber.org/protocol/muc<"
        )
        #expect(caps.ver == "QgayPKawpkPSDYmwT/WM94uAlu0=")
    }

    @Test("identities sort by lang; duplicates and input order do not matter")
    func languages() {
        // The identities and features of XEP-0115 §5.3 without the extended form;
        // the expected hash was computed independently (Python hashlib).
        let english = EntityCapabilities.Identity(category: "client", type: "pc", lang: "en", name: "Psi 0.11")
        let greek = EntityCapabilities.Identity(category: "client", type: "pc", lang: "el", name: "Ψ 0.11")
        let caps = EntityCapabilities(identities: [english, greek, english], features: self.features + [self.features[1]])
        #expect(
            caps.verificationString
                == "client/pc/el/Ψ 0.11<client/pc/en/Psi 0.11<http://jabber.org/protocol/caps<http://jabber.org/protocol/disco#info<http://jabber.org/protocol/disco#items<http://jabber.org/protocol/muc<"
        )
        #expect(caps.ver == "2ZC2Fe8xb+Ln321QG0/AaqNEfBU=")
        let shuffled = EntityCapabilities(identities: [greek, english], features: self.features.shuffled())
        #expect(shuffled.ver == caps.ver)
    }

    @Test("sorting is by field, then octets, not by the joined string")
    func fieldOrder() {
        // "a" < "a-b" field-wise, though "a-b/" < "a/" as whole strings.
        let caps = EntityCapabilities(
            identities: [.init(category: "a-b", type: "x"), .init(category: "a", type: "x"), .init(category: "a", type: "X")],
            features: ["b", "B", "a"]
        )
        #expect(caps.verificationString == "a/X//<a/x//<a-b/x//<B<a<b<")
    }

    @Test("caps element")
    func capsElement() {
        let caps = EntityCapabilities(identities: [.init(category: "client", type: "pc", name: "Exodus 0.9.1")], features: self.features)
        let element = caps.capsElement(node: "https://example.org/bridge")
        #expect(element.name == "c")
        #expect(element.namespace == "http://jabber.org/protocol/caps")
        #expect(element[attribute: "hash"] == "sha-1")
        #expect(element[attribute: "node"] == "https://example.org/bridge")
        #expect(element[attribute: "ver"] == "QgayPKawpkPSDYmwT/WM94uAlu0=")
        #expect(element.children.isEmpty)
    }

    @Test("disco#info result lists what was hashed, in hash order")
    func discoInfo() {
        let caps = EntityCapabilities(
            identities: [
                .init(category: "client", type: "pc", lang: "en", name: "Psi 0.11"),
                .init(category: "client", type: "bot"),
            ],
            features: ["urn:b", "urn:a", "urn:b"]
        )
        let query = caps.discoInfoResult(node: "https://example.org/bridge#\(caps.ver)")
        #expect(
            XMLSerializer.string(query)
                == "<query xmlns=\"http://jabber.org/protocol/disco#info\" node=\"https://example.org/bridge#\(caps.ver)\">"
                + "<identity category=\"client\" type=\"bot\"/>"
                + "<identity category=\"client\" type=\"pc\" xml:lang=\"en\" name=\"Psi 0.11\"/>"
                + "<feature var=\"urn:a\"/><feature var=\"urn:b\"/></query>"
        )
        #expect(caps.discoInfoResult(node: nil)[attribute: "node"] == nil)
    }
}
