import Testing

@testable import XMPP

/// Roster and subscription requests (RFC 6121 §2.3–2.5, §3) as any ``RosterRequester``
/// builds them, checked on a recorder instead of a server.
@Suite("RosterRequester")
struct RosterRequesterTests {
    /// Records what a session would send; answers every IQ with an empty result.
    actor Recorder: RosterRequester {
        var sent: [XMLElement] = []
        var requests: [IQ] = []
        var ids = 0

        func send(_ element: XMLElement) async throws { self.sent.append(element) }
        func request(_ iq: IQ, timeout: Duration?) async throws -> IQ {
            self.requests.append(iq)
            return IQ(type: .result, id: iq.id, payload: nil)
        }
        func nextID() -> String {
            self.ids += 1
            return "id\(self.ids)"
        }
        var boundJID: JID? { nil }
    }

    @Test func setAndRemoveAContactAreRosterSetsForItsBareJID() async throws {
        let recorder = Recorder()
        try await recorder.setContact(try JID("romeo@example.net/orchard"), name: "Romeo", groups: ["Friends"])
        try await recorder.removeContact(try JID("nurse@example.com/kitchen"))
        let requests = await recorder.requests
        #expect(requests.map(\.type) == [.set, .set])
        #expect(requests.map(\.id) == ["id1", "id2"], "each request gets a fresh id")
        let set = try #require(requests[0].payload?.firstChild(named: "item", namespace: Roster.namespace))
        #expect(set[attribute: "jid"] == "romeo@example.net")
        #expect(set[attribute: "name"] == "Romeo")
        #expect(set[attribute: "subscription"] == nil, "a client never sets the subscription (RFC 6121 §2.1.2.5)")
        #expect(set.elements.compactMap(\.text) == ["Friends"])
        let remove = try #require(requests[1].payload?.firstChild(named: "item", namespace: Roster.namespace))
        #expect(remove[attribute: "jid"] == "nurse@example.com")
        #expect(remove[attribute: "subscription"] == "remove")
        #expect(await recorder.sent.isEmpty)
    }

    @Test func subscriptionPresencesGoToTheBareJID() async throws {
        let recorder = Recorder()
        let contact = try JID("romeo@example.net/orchard")
        try await recorder.subscribe(to: contact)
        try await recorder.unsubscribe(from: contact)
        try await recorder.approveSubscription(from: contact)
        try await recorder.denySubscription(from: contact)
        let sent = await recorder.sent
        #expect(sent.map { $0[attribute: "type"] } == ["subscribe", "unsubscribe", "subscribed", "unsubscribed"])
        #expect(sent.allSatisfy { $0.name == "presence" && $0[attribute: "to"] == "romeo@example.net" })
        #expect(await recorder.requests.isEmpty)
    }
}
