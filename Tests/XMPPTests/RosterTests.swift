import Testing

@testable import XMPP

/// Parses one top-level element written inside a `jabber:client` stream.
private func element(_ xml: String) throws -> XMLElement {
    let result = parseStream(testStreamHeader + xml)
    if let error = result.error { throw error }
    return try #require(result.events.compactMap(\.element).last)
}

private func iq(_ xml: String) throws -> IQ {
    try IQ(element: element(xml))
}

private func jid(_ string: String) throws -> JID {
    try JID(string)
}

private let ownJID = try! JID("juliet@example.com/balcony")

@Suite("Roster item")
struct RosterItemTests {
    @Test("reads jid, name, groups in order without duplicates, subscription and ask")
    func parseItem() throws {
        let item = try RosterItem(
            element: element(
                """
                <query xmlns='jabber:iq:roster'><item jid='Romeo@Example.NET' name='Romeo' subscription='both' ask='subscribe'>\
                <group>Friends</group><group>Lovers</group><group>Friends</group><group></group></item></query>
                """
            ).elements[0]
        )
        #expect(item.jid == (try jid("romeo@example.net")))
        #expect(item.name == "Romeo")
        #expect(item.groups == ["Friends", "Lovers"])
        #expect(item.subscription == .both)
        #expect(item.askSubscribe)
    }

    @Test("missing subscription means none; empty name means no name; other ask values are ignored")
    func defaults() throws {
        let item = try RosterItem(
            element: element("<query xmlns='jabber:iq:roster'><item jid='nurse@example.com' name='' ask='unsubscribe'/></query>").elements[0]
        )
        #expect(item.subscription == .none)
        #expect(item.name == nil)
        #expect(!item.askSubscribe)
        #expect(item.groups.isEmpty)
    }

    @Test("rejects items without a usable bare jid or with an unknown subscription", arguments: [
        "<item/>",
        "<item jid='romeo@example.net/orchard'/>",
        "<item jid='romeo@example.net' subscription='sometimes'/>",
    ])
    func invalidItems(_ xml: String) throws {
        let child = try element("<query xmlns='jabber:iq:roster'>\(xml)</query>").elements[0]
        #expect(throws: StanzaParseError.invalidPayload) { try RosterItem(element: child) }
    }

    @Test("an invalid jid is reported as an invalid address")
    func invalidJID() throws {
        let child = try element("<query xmlns='jabber:iq:roster'><item jid='a@b@c'/></query>").elements[0]
        do {
            _ = try RosterItem(element: child)
            Issue.record("parsed an invalid jid")
        } catch {
            guard case .invalidAddress(let attribute, _, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(attribute == "jid")
        }
    }

    @Test("an item outside the roster namespace is refused")
    func wrongNamespace() throws {
        let child = try element("<query xmlns='urn:other'><item jid='romeo@example.net'/></query>").elements[0]
        #expect(throws: StanzaParseError.invalidPayload) { try RosterItem(element: child) }
    }

    @Test("element round-trips")
    func roundTrip() throws {
        let item = RosterItem(
            jid: try jid("romeo@example.net"), name: "Romeo", groups: ["A", "B", "A"], subscription: .to, askSubscribe: true
        )
        #expect(item.groups == ["A", "B"])
        #expect(try RosterItem(element: item.element) == item)
        #expect(item.element[attribute: "ask"] == "subscribe")
        #expect(item.element[attribute: "subscription"] == "to")
    }
}

@Suite("Roster")
struct RosterTests {
    private func fullRoster() throws -> Roster {
        var roster = Roster()
        try roster.applyResult(
            iq(
                """
                <iq type='result' id='r1'><query xmlns='jabber:iq:roster' ver='ver7'>\
                <item jid='romeo@example.net' name='Romeo' subscription='both'><group>Friends</group></item>\
                <item jid='nurse@example.com' subscription='to'/>\
                </query></iq>
                """
            )
        )
        return roster
    }

    @Test("query carries ver only with versioning, empty when nothing is cached")
    func query() {
        let plain = Roster.query(version: "v1", versioning: false)
        #expect(plain.name == "query")
        #expect(plain.namespace == "jabber:iq:roster")
        #expect(plain[attribute: "ver"] == nil)
        #expect(Roster.query(version: nil, versioning: true)[attribute: "ver"] == "")
        #expect(Roster.query(version: "v1", versioning: true)[attribute: "ver"] == "v1")
    }

    @Test("setItem leaves out subscription and ask; removeItem says remove")
    func setPayloads() throws {
        let item = RosterItem(jid: try jid("romeo@example.net"), name: "Romeo", groups: ["Friends"], subscription: .both, askSubscribe: true)
        let set = Roster.setItem(item)
        #expect(set.name == "query" && set.namespace == Roster.namespace)
        let child = try #require(set.elements.first)
        #expect(set.elements.count == 1)
        #expect(child[attribute: "jid"] == "romeo@example.net")
        #expect(child[attribute: "name"] == "Romeo")
        #expect(child[attribute: "subscription"] == nil)
        #expect(child[attribute: "ask"] == nil)
        #expect(child.elements.map(\.text) == ["Friends"])

        let remove = Roster.removeItem(try jid("romeo@example.net/orchard"))
        #expect(remove.elements.count == 1)
        #expect(remove.elements[0].attributes == [
            XMLAttribute(name: "jid", value: "romeo@example.net"), XMLAttribute(name: "subscription", value: "remove"),
        ])
        var removing = item
        removing.subscription = .remove
        #expect(Roster.setItem(removing) == Roster.removeItem(item.jid))
    }

    @Test("a result replaces every item and takes the version")
    func resultReplaces() throws {
        var roster = try self.fullRoster()
        #expect(roster.version == "ver7")
        #expect(roster.items.count == 2)
        #expect(roster.items[try jid("romeo@example.net")]?.groups == ["Friends"])

        try roster.applyResult(
            iq("<iq type='result' id='r2'><query xmlns='jabber:iq:roster'><item jid='tybalt@example.org'/></query></iq>")
        )
        #expect(Array(roster.items.keys) == [try jid("tybalt@example.org")])
        #expect(roster.version == nil)
    }

    @Test("an empty versioned result means unchanged")
    func versionedEmptyResult() throws {
        var roster = try self.fullRoster()
        let before = roster
        try roster.applyResult(iq("<iq type='result' id='r2'/>"))
        #expect(roster == before)
        #expect(roster.items.count == 2)
        #expect(roster.version == "ver7")
    }

    @Test("a result skips unreadable and remove items instead of failing")
    func resultSkipsBadItems() throws {
        var roster = Roster()
        try roster.applyResult(
            iq(
                """
                <iq type='result' id='r1'><query xmlns='jabber:iq:roster'>\
                <item jid='a@b@c'/><item jid='x@example.com/res'/><item jid='gone@example.com' subscription='remove'/>\
                <item jid='ok@example.com'/></query></iq>
                """
            )
        )
        #expect(Array(roster.items.keys) == [try jid("ok@example.com")])
    }

    @Test("a non-result or a foreign payload is an error")
    func resultErrors() throws {
        var roster = try self.fullRoster()
        let before = roster
        #expect(throws: StanzaParseError.invalidType("error")) {
            try roster.applyResult(iq("<iq type='error' id='r1'><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"))
        }
        #expect(throws: StanzaParseError.invalidPayload) {
            try roster.applyResult(iq("<iq type='result' id='r1'><query xmlns='urn:other'/></iq>"))
        }
        #expect(roster == before)
    }

    @Test("a push without from or from the own bare JID is applied and updates the version", arguments: [
        "", " from='juliet@example.com'", " from='JULIET@example.com'",
    ])
    func pushAccepted(_ fromAttribute: String) throws {
        var roster = try self.fullRoster()
        let push = try iq(
            "<iq type='set' id='p1'\(fromAttribute)><query xmlns='jabber:iq:roster' ver='ver8'><item jid='benvolio@example.net' name='Ben'/></query></iq>"
        )
        let outcome = roster.applyPush(push, ownJID: ownJID)
        let expected = RosterItem(jid: try jid("benvolio@example.net"), name: "Ben")
        #expect(outcome == .applied(expected))
        #expect(roster.items[expected.jid] == expected)
        #expect(roster.items.count == 3)
        #expect(roster.version == "ver8")
    }

    @Test("a push from a stranger, another server or the own full JID is rejected", arguments: [
        "eve@evil.example", "evil.example", "example.com", "juliet@example.com/balcony", "juliet@example.com/other",
    ])
    func pushFromWrongSender(_ from: String) throws {
        var roster = try self.fullRoster()
        let before = roster
        let push = try iq(
            "<iq type='set' id='p1' from='\(from)'><query xmlns='jabber:iq:roster' ver='evil'><item jid='eve@evil.example' subscription='both'/></query></iq>"
        )
        guard case .rejected = roster.applyPush(push, ownJID: ownJID) else {
            Issue.record("push from \(from) accepted")
            return
        }
        #expect(roster == before)
    }

    @Test("a push must carry exactly one readable item in a roster query", arguments: [
        "<query xmlns='jabber:iq:roster'><item jid='a@example.com'/><item jid='b@example.com'/></query>",
        "<query xmlns='jabber:iq:roster'/>",
        "<query xmlns='jabber:iq:roster'><item jid='a@example.com/r'/></query>",
        "<query xmlns='urn:other'><item jid='a@example.com'/></query>",
    ])
    func malformedPush(_ payload: String) throws {
        var roster = try self.fullRoster()
        let before = roster
        let push = try iq("<iq type='set' id='p1'>\(payload)</iq>")
        guard case .rejected = roster.applyPush(push, ownJID: ownJID) else {
            Issue.record("malformed push accepted")
            return
        }
        #expect(roster == before)
    }

    @Test("only an iq set is a push")
    func pushType() throws {
        var roster = try self.fullRoster()
        let result = try iq("<iq type='result' id='p1'><query xmlns='jabber:iq:roster'><item jid='a@example.com'/></query></iq>")
        guard case .rejected = roster.applyPush(result, ownJID: ownJID) else {
            Issue.record("result accepted as a push")
            return
        }
    }

    @Test("a remove push deletes the item")
    func removePush() throws {
        var roster = try self.fullRoster()
        let push = try iq(
            "<iq type='set' id='p1'><query xmlns='jabber:iq:roster' ver='ver9'><item jid='nurse@example.com' subscription='remove'/></query></iq>"
        )
        #expect(roster.applyPush(push, ownJID: ownJID) == .removed(try jid("nurse@example.com")))
        #expect(roster.items[try jid("nurse@example.com")] == nil)
        #expect(roster.items.count == 1)
        #expect(roster.version == "ver9")
    }

    @Test("a push without ver keeps the version")
    func pushWithoutVersion() throws {
        var roster = try self.fullRoster()
        let push = try iq("<iq type='set' id='p1'><query xmlns='jabber:iq:roster'><item jid='romeo@example.net' subscription='from'/></query></iq>")
        #expect(roster.applyPush(push, ownJID: ownJID) == .applied(RosterItem(jid: try jid("romeo@example.net"), subscription: .from)))
        #expect(roster.version == "ver7")
        #expect(roster.items[try jid("romeo@example.net")]?.groups == [])
    }
}
