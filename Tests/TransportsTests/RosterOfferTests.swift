import Testing
import TransportCore
import XMPP

@testable import GatewayComponent

/// Which puppets a gateway user is offered, and how (XEP-0144, XEP-0356), plus the small
/// rules around them: puppet addresses, registration patterns, a user's aggregate presence.
@Suite("RosterOffer and gateway rules")
struct RosterOfferTests {
    static let puppets = PuppetAddress(domain: "GW.example")

    static func item(_ jid: String, name: String? = nil, groups: [String] = []) -> RosterItem {
        RosterItem(jid: try! JID(jid), name: name, groups: groups)
    }

    @Test("first offer: every contact with a localpart (not a server), named and grouped; then only changes; removed contacts are deleted")
    func changes() throws {
        var offer = RosterOffer(puppets: Self.puppets, defaultGroup: "Home")
        let first = offer.changes(for: "alice@work.example", contacts: [Self.item("bob@home.example", name: "Bob", groups: ["Friends"]), Self.item("carol@home.example"), Self.item("home.example")])
        #expect(first.add.map(\.puppet.description) == ["bob\\40home.example@gw.example", "carol\\40home.example@gw.example"])
        #expect(first.add[0].name == "Bob" && first.add[0].groups == ["Friends"])
        #expect(first.add[1].name == "carol@home.example" && first.add[1].groups == ["Home"])
        let same = offer.changes(for: "alice@work.example", contacts: [Self.item("bob@home.example", name: "Bob", groups: ["Friends"]), Self.item("carol@home.example")])
        #expect(same.add.isEmpty && same.remove.isEmpty)
        let changed = offer.changes(for: "alice@work.example", contacts: [Self.item("bob@home.example", name: "Robert", groups: ["Friends"])])
        #expect(changed.add.map(\.name) == ["Robert"])
        #expect(changed.remove.map(\.description) == ["carol\\40home.example@gw.example"])
        // What stands offered: written into the roster when the privilege comes late.
        #expect(offer.offeredItems.mapValues { $0.map { "\($0.puppet) \($0.name ?? "-")" } } == ["alice@work.example": ["bob\\40home.example@gw.example Robert"]])
        offer.forget("alice@work.example")
        #expect(offer.offeredItems.isEmpty)
        #expect(offer.changes(for: "alice@work.example", contacts: [Self.item("bob@home.example", name: "Robert", groups: ["Friends"])]).add.count == 1)
    }

    @Test("XEP-0144 messages from the gateway, at most 100 items each; XEP-0356 pushes one item each, subscription both or remove")
    func stanzas() throws {
        var offer = RosterOffer(puppets: Self.puppets, defaultGroup: "Home")
        let contacts = (0..<250).map { Self.item("c\($0)@home.example") }
        let changes = offer.changes(for: "alice@work.example", contacts: contacts)
        let messages = RosterOffer.exchangeMessages(from: try JID("gw.example"), to: try JID("alice@work.example"), add: changes.add, remove: [try JID("old\\40home.example@gw.example")])
        #expect(messages.count == 3)
        let parsed = try messages.map { try Message(element: $0) }
        #expect(parsed.allSatisfy { $0.from?.description == "gw.example" && $0.to?.description == "alice@work.example" })
        let items = parsed.flatMap { $0.extensions.first { $0.namespace == "http://jabber.org/protocol/rosterx" }?.elements ?? [] }
        #expect(items.count == 251)
        #expect(items.last?[attribute: "action"] == "delete" && items.first?[attribute: "action"] == "add")
        let pushes = RosterOffer.rosterPushes(from: try JID("gw.example"), to: try JID("alice@work.example/phone"), add: Array(changes.add.prefix(2)), remove: [try JID("old\\40home.example@gw.example")])
        let iqs = try pushes.map { try IQ(element: { var element = $0; element[attribute: "id"] = "x"; return element }($0)) }
        #expect(iqs.count == 3 && iqs.allSatisfy { $0.type == .set && $0.to?.description == "alice@work.example" })
        #expect(iqs.map { $0.payload?.elements.first?[attribute: "subscription"] } == ["both", "both", "remove"])
    }

    @Test("puppet addresses: escaped both ways; the gateway itself, other domains and resources stand for no contact")
    func puppetAddresses() throws {
        #expect(Self.puppets.puppet(for: "bob@home.example")?.description == "bob\\40home.example@gw.example")
        #expect(Self.puppets.contact(of: try JID("bob\\40home.example@gw.example")) == "bob@home.example")
        #expect(Self.puppets.contact(of: try JID("gw.example")) == nil)
        #expect(Self.puppets.contact(of: try JID("bob\\40home.example@other.example")) == nil)
        #expect(Self.puppets.contact(of: try JID("bob\\40home.example\\2fphone@gw.example")) == nil, "a resource is no bare contact")
        #expect(Self.puppets.puppet(for: String(repeating: "x", count: 1100) + "@home.example") == nil, "too long for a localpart")
    }

    @Test("registration policies: closed, open, and allowlist globs with * (case-insensitive, no backtracking blow-up)")
    func policies() {
        #expect(!RegistrationPolicy.closed.allows("alice@work.example", patterns: ["*"]))
        #expect(RegistrationPolicy.open.allows("eve@evil.example", patterns: []))
        #expect(RegistrationPolicy.allowlist.allows("Alice@Work.example", patterns: ["*@work.example"]))
        #expect(!RegistrationPolicy.allowlist.allows("alice@work.example.evil", patterns: ["*@work.example"]))
        #expect(RegistrationPolicy.allowlist.allows("ops-alice@work.example", patterns: ["ops-*@*.example"]))
        #expect(!RegistrationPolicy.allowlist.allows("alice@work.example", patterns: []))
        #expect(!RegistrationPolicy.allowlist.allows(String(repeating: "a", count: 5000) + "b", patterns: [String(repeating: "*a", count: 50) + "c"]))
    }

    @Test("a user's presence is their most available resource")
    func aggregate() {
        #expect(GatewayTransport.aggregate([:]) == .unavailable)
        let state = GatewayTransport.aggregate(["phone": PresenceState(availability: .away, status: "out"), "desk": PresenceState(availability: .dnd, status: nil)])
        #expect(state == PresenceState(availability: .away, status: "out"))
        #expect(GatewayTransport.aggregate(["a": PresenceState(availability: .available, status: "1"), "b": PresenceState(availability: .available, status: "2")]).status == "1")
    }
}
