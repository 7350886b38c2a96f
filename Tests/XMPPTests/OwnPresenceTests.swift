import Testing

@testable import XMPP

/// The presence the session broadcasts (issue 40: a part of its own).
@Suite("OwnPresence")
struct OwnPresenceTests {
    static let capabilities = EntityCapabilities.session(named: "session-test")
    static let node = "https://example.org/session-test"

    static func photo(_ hash: String) -> XMLElement {
        var x = XMLElement(name: "x", namespace: "vcard-temp:x:update")
        var photo = XMLElement(name: "photo", namespace: "vcard-temp:x:update")
        photo.append(text: hash)
        x.append(photo)
        return x
    }

    @Test func anAvailablePresenceCarriesCapsAndTheExtensionsAnUnavailableOneOnlyCaps() {
        var own = OwnPresence(Presence())
        let changed = own.setExtensions([Self.photo("abc")])
        let unchanged = own.setExtensions([Self.photo("abc")])
        #expect(changed && !unchanged, "the same extensions are nothing to broadcast again")
        let available = own.announcement(of: Presence(), capabilities: Self.capabilities, node: Self.node)
        #expect(available.extensions.map(\.namespace) == [EntityCapabilities.namespace, "vcard-temp:x:update"])
        #expect(available.extensions.first?[attribute: "ver"] == Self.capabilities.ver)
        let away = own.announcement(of: Presence(type: .unavailable), capabilities: Self.capabilities, node: Self.node)
        #expect(away.extensions.map(\.namespace) == [EntityCapabilities.namespace])
    }
}
