import Testing
import TransportCore
import XMPP
import XMPPMapping

@testable import GatewayComponent

/// A contact's presence as its puppet shows it (RFC 6121 §4.7), with the avatar hash of
/// XEP-0153 §3.2 read from the contact and passed on, without I/O.
@Suite("PuppetPresence")
struct PuppetPresenceTests {
    static let hash = "a3f1c0ffee00112233445566778899aabbccddee"

    static func presence(photo: String?, show: Presence.Show? = .away) -> Presence {
        var presence = Presence(show: show, status: "lunch")
        if let photo {
            var element = XMLElement(name: "photo", namespace: "vcard-temp:x:update")
            if !photo.isEmpty { element.append(text: photo) }
            var update = XMLElement(name: "x", namespace: "vcard-temp:x:update")
            update.append(element)
            presence.extensions.append(update)
        }
        return presence
    }

    @Test("the photo hash is read from a contact's presence: a hash, none (empty photo), or not said; anything not a SHA-1 is not passed on")
    func readsTheAvatarHash() {
        #expect(StanzaMapping.state(Self.presence(photo: Self.hash)) == PresenceState(availability: .away, status: "lunch", avatar: Self.hash))
        #expect(StanzaMapping.state(Self.presence(photo: " \(Self.hash.uppercased())\n")).avatar == Self.hash)
        #expect(StanzaMapping.state(Self.presence(photo: "")).avatar == "")
        #expect(StanzaMapping.state(Self.presence(photo: nil)).avatar == nil)
        #expect(StanzaMapping.state(Self.presence(photo: "<script>")).avatar == nil)
        #expect(StanzaMapping.state(Self.presence(photo: String(repeating: "a", count: 41))).avatar == nil)
    }

    @Test("a puppet's presence carries the contact's avatar hash (an empty photo when it has none); unavailable and unknown carry none")
    func puppetPresenceCarriesTheHash() throws {
        let puppet = try JID("bob\\40home.example@gw.example")
        let user = try JID("alice@work.example")
        func photo(_ state: PresenceState) throws -> String? {
            let presence = try Presence(element: GatewayTransport.presence(state, from: puppet, to: user))
            #expect(presence.from == puppet && presence.to == user)
            let update = presence.extensions.first { $0.name == "x" && $0.namespace == "vcard-temp:x:update" }
            return update.map { $0.firstChild(named: "photo", namespace: "vcard-temp:x:update")?.text ?? "(no photo)" }
        }
        #expect(try photo(PresenceState(availability: .available, avatar: Self.hash)) == Self.hash)
        #expect(try photo(PresenceState(availability: .dnd, avatar: "")) == "")
        #expect(try photo(PresenceState(availability: .available)) == nil)
        #expect(try photo(PresenceState(availability: .unavailable, avatar: Self.hash)) == nil)
    }

    @Test("a change of avatar alone is no presence change for notices or mirroring")
    func withoutAvatar() {
        let a = PresenceState(availability: .away, status: "lunch", avatar: Self.hash)
        let b = PresenceState(availability: .away, status: "lunch", avatar: "")
        #expect(a != b && a.withoutAvatar == b.withoutAvatar && a.withoutAvatar.avatar == nil)
    }
}
