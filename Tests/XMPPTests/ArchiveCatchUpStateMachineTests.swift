import Foundation
import Testing

@testable import XMPP

/// Message archive catch-up (XEP-0313 with RSM, XEP-0059), without sockets (issue 9).
@Suite("ArchiveCatchUpStateMachine")
struct ArchiveCatchUpStateMachineTests {
    typealias Machine = ArchiveCatchUpStateMachine
    static let own = try! JID("bridge@example.test/relay")
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func query(_ action: Machine.Action?) -> (id: String, query: XMLElement)? {
        guard case .query(let iq) = action, let payload = iq.payload else { return nil }
        return (iq.id, payload)
    }

    static func rsm(_ query: XMLElement, _ name: String) -> XMLElement? {
        query.firstChild(named: "set", namespace: Machine.resultSetNamespace)?.firstChild(named: name, namespace: Machine.resultSetNamespace)
    }

    static func field(_ query: XMLElement, _ name: String) -> String? {
        query.firstChild(named: "x", namespace: Machine.dataFormsNamespace)?.elements
            .first { $0[attribute: "var"] == name }?.firstChild(named: "value", namespace: Machine.dataFormsNamespace)?.text
    }

    static func result(
        queryID: String, id: String, from: String = "alice@example.test/phone", type: String = "chat", body: String = "hi", outerFrom: String? = nil
    ) -> XMLElement {
        var inner = XMLElement(name: "message", namespace: XMPPNamespace.client)
        inner[attribute: "from"] = from
        inner[attribute: "to"] = "bridge@example.test"
        inner[attribute: "type"] = type
        var bodyElement = XMLElement(name: "body", namespace: XMPPNamespace.client)
        bodyElement.append(text: body)
        inner.append(bodyElement)
        var forwarded = XMLElement(name: "forwarded", namespace: Machine.forwardNamespace)
        forwarded.append(inner)
        var result = XMLElement(name: "result", namespace: Machine.namespace)
        result[attribute: "queryid"] = queryID
        result[attribute: "id"] = id
        result.append(forwarded)
        var outer = XMLElement(name: "message", namespace: XMPPNamespace.client)
        outer[attribute: "to"] = Self.own.description
        if let outerFrom { outer[attribute: "from"] = outerFrom }
        outer.append(result)
        return outer
    }

    static func fin(_ id: String, complete: Bool, last: String?) -> IQ {
        var fin = XMLElement(name: "fin", namespace: Machine.namespace)
        if complete { fin[attribute: "complete"] = "true" }
        var set = XMLElement(name: "set", namespace: Machine.resultSetNamespace)
        if let last {
            var element = XMLElement(name: "last", namespace: Machine.resultSetNamespace)
            element.append(text: last)
            set.append(element)
        }
        fin.append(set)
        return IQ(type: .result, id: id, payload: fin)
    }

    @Test("first start (no cursor): asks for the archive's last item only, relays nothing old, and stands after it")
    func anchor() throws {
        var machine = Machine(ownJID: Self.own, cursor: nil)
        #expect(machine.needsCatchUp)
        let (id, query) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(query[attribute: "queryid"] == "q1" && id == "q1")
        #expect(Self.rsm(query, "max")?.text == "1" && Self.rsm(query, "before") != nil && Self.rsm(query, "after") == nil)
        #expect(Self.field(query, "FORM_TYPE") == Machine.namespace && Self.field(query, "start") == nil)
        #expect(machine.received(Self.result(queryID: "q1", id: "A9")) == .skipped)
        #expect(machine.answered(Self.fin("q1", complete: false, last: "A9"), now: Self.now, nextQueryID: "q2") == .caughtUp(.after("A9"), emitted: 0, pages: 1))
        #expect(!machine.needsCatchUp)
        // From now on live messages move the cursor.
        #expect(machine.liveMessage(stanzaID: "B1") == .after("B1"))
    }

    @Test("a query cut off by the connection's end leaves the gap open: the next stream, even a resumed one, catches up again")
    func queryCutOff() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A1"))
        _ = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(!machine.needsCatchUp, "querying")
        machine.connectionLost()
        machine.streamStarted(continuesLast: true)
        #expect(machine.needsCatchUp)
        _ = try #require(Self.query(machine.start(now: Self.now, queryID: "q2")), "the catch-up starts again")
    }

    @Test("only a catch-up with a cursor relays (and so holds live messages); a live id seen before it starts never becomes its cursor")
    func relaysOnlyWithACursorAndForgetsEarlierLiveIDs() throws {
        let first = Machine(ownJID: Self.own, cursor: nil)
        #expect(first.needsCatchUp && !first.emitsOnCatchUp)
        var machine = Machine(ownJID: Self.own, cursor: .after("A0"))
        #expect(machine.emitsOnCatchUp)
        // Seen while the gap was open on a connection that then ended.
        #expect(machine.liveMessage(stanzaID: "Z9") == nil)
        machine.streamStarted(continuesLast: false)
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(!machine.emitsOnCatchUp)
        _ = machine.received(Self.result(queryID: id, id: "A1"))
        #expect(machine.answered(Self.fin(id, complete: true, last: "A1"), now: Self.now, nextQueryID: "q2") == .caughtUp(.after("A1"), emitted: 1, pages: 1))
    }

    @Test("a gap opened again after the catch-up (held messages dropped with the connection) survives a resumed stream: the next catch-up reads after the cursor")
    func reopenedGapSurvivesResumption() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A0"))
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        _ = machine.received(Self.result(queryID: id, id: "A1"))
        _ = machine.answered(Self.fin(id, complete: true, last: "A1"), now: Self.now, nextQueryID: "q2")
        #expect(machine.liveMessage(stanzaID: "B1") == .after("B1"))
        machine.reopenGap()
        machine.streamStarted(continuesLast: true)
        #expect(machine.emitsOnCatchUp)
        let (_, query) = try #require(Self.query(machine.start(now: Self.now, queryID: "q3")))
        #expect(Self.rsm(query, "after")?.text == "B1")
    }

    @Test("first start with an empty archive: the cursor is the moment the query started")
    func anchorEmpty() throws {
        var machine = Machine(ownJID: Self.own, cursor: nil)
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(machine.answered(Self.fin(id, complete: true, last: nil), now: Self.now, nextQueryID: "q2") == .caughtUp(.since(Self.now), emitted: 0, pages: 1))
    }

    @Test("after a cursor: pages after it, not before the maximum age; others' chat and normal messages are relayed, ours and groupchat skipped")
    func pages() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A1"), configuration: .init(pageSize: 2, maximumAge: .seconds(3_600)))
        let (first, query) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(Self.rsm(query, "after")?.text == "A1" && Self.rsm(query, "max")?.text == "2")
        #expect(Self.field(query, "start") == Machine.timestamp(Self.now.addingTimeInterval(-3_600)))
        guard case .archived(let message, let cursor) = machine.received(Self.result(queryID: first, id: "A2", body: "one")) else {
            Issue.record("not archived")
            return
        }
        #expect(message.body == "one" && message.from?.description == "alice@example.test/phone" && cursor == .after("A2"))
        #expect(machine.received(Self.result(queryID: first, id: "A3", from: "bridge@example.test/relay")) == .skipped)
        let (second, next) = try #require(Self.query(machine.answered(Self.fin(first, complete: false, last: "A3"), now: Self.now, nextQueryID: "q2")))
        #expect(second == "q2" && Self.rsm(next, "after")?.text == "A3")
        // Results for the old query id are no longer ours.
        if case .forged = machine.received(Self.result(queryID: first, id: "A4")) {} else { Issue.record("old query id accepted") }
        #expect(machine.received(Self.result(queryID: second, id: "A4", type: "groupchat")) == .skipped)
        if case .archived(let normal, _) = machine.received(Self.result(queryID: second, id: "A5", type: "normal")) {
            #expect(normal.type == .normal)
        } else {
            Issue.record("normal message not archived")
        }
        #expect(machine.answered(Self.fin(second, complete: true, last: "A5"), now: Self.now, nextQueryID: "q3") == .caughtUp(.after("A5"), emitted: 2, pages: 2))
    }

    @Test("results not from our own archive, for no query, or without an id are forged; ordinary messages are not results")
    func forged() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A1"))
        if case .forged = machine.received(Self.result(queryID: "q1", id: "X")) {} else { Issue.record("result with no query accepted") }
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        for outer in ["mallory@example.test", "bridge@example.test/relay", "example.test"] {
            if case .forged = machine.received(Self.result(queryID: id, id: "X", outerFrom: outer)) {} else { Issue.record("result from \(outer) accepted") }
        }
        if case .archived = machine.received(Self.result(queryID: id, id: "A2", outerFrom: "bridge@example.test")) {} else { Issue.record("own archive refused") }
        if case .forged = machine.received(Self.result(queryID: id, id: "")) {} else { Issue.record("empty id accepted") }
        var plain = XMLElement(name: "message", namespace: XMPPNamespace.client)
        plain[attribute: "from"] = "alice@example.test"
        #expect(machine.received(plain) == .notAResult)
    }

    @Test("live messages while the gap is open do not move the cursor; once caught up it stands at the newest live one")
    func liveDuringGap() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A1"))
        #expect(machine.liveMessage(stanzaID: "L1") == nil)
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        #expect(machine.liveMessage(stanzaID: "L2") == nil)
        _ = machine.received(Self.result(queryID: id, id: "A2"))
        #expect(machine.answered(Self.fin(id, complete: true, last: "A2"), now: Self.now, nextQueryID: "q2") == .caughtUp(.after("L2"), emitted: 1, pages: 1))
        #expect(machine.liveMessage(stanzaID: "L3") == .after("L3"))
        #expect(machine.liveMessage(stanzaID: nil) == nil)
    }

    @Test("a stream that resumes this process's last one keeps the cursor moving; any other opens a gap, and a query under way is abandoned")
    func streams() throws {
        var machine = Machine(ownJID: Self.own, cursor: nil)
        let (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        _ = machine.answered(Self.fin(id, complete: true, last: "A1"), now: Self.now, nextQueryID: "q2")
        machine.streamStarted(continuesLast: true)
        #expect(!machine.needsCatchUp)
        machine.streamStarted(continuesLast: false)
        #expect(machine.needsCatchUp && machine.liveMessage(stanzaID: "L1") == nil)
        _ = machine.start(now: Self.now, queryID: "q3")
        #expect(machine.start(now: Self.now, queryID: "q4") == nil)  // one at a time
        machine.streamStarted(continuesLast: true)  // the connection broke mid query
        #expect(machine.needsCatchUp)
        if case .forged = machine.received(Self.result(queryID: "q3", id: "A2")) {} else { Issue.record("abandoned query's result accepted") }
    }

    @Test("an expired cursor (item-not-found) reads from the maximum age instead; without one, learns the archive's end")
    func expiredCursor() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("gone"), configuration: .init(maximumAge: .seconds(60)))
        _ = machine.start(now: Self.now, queryID: "q1")
        let (_, query) = try #require(Self.query(machine.failed(.itemNotFound, now: Self.now, nextQueryID: "q2")))
        #expect(Self.rsm(query, "after") == nil && Self.field(query, "start") == Machine.timestamp(Self.now.addingTimeInterval(-60)))
        // A later page's item-not-found is not about the stored cursor.
        #expect(machine.failed(.itemNotFound, now: Self.now, nextQueryID: "q3") == .gaveUp("archive query failed: item-not-found"))
        #expect(machine.needsCatchUp)

        var unlimited = Machine(ownJID: Self.own, cursor: .after("gone"), configuration: .init(maximumAge: nil))
        _ = unlimited.start(now: Self.now, queryID: "q1")
        let (_, anchor) = try #require(Self.query(unlimited.failed(.itemNotFound, now: Self.now, nextQueryID: "q2")))
        #expect(Self.rsm(anchor, "before") != nil)
    }

    @Test("no archive on the server: catch-up is off for good, live messages move nothing; other failures keep the gap")
    func failures() throws {
        var machine = Machine(ownJID: Self.own, cursor: nil)
        _ = machine.start(now: Self.now, queryID: "q1")
        guard case .unavailable = machine.failed(.serviceUnavailable, now: Self.now, nextQueryID: "q2") else {
            Issue.record("service-unavailable not read as no archive")
            return
        }
        machine.streamStarted(continuesLast: false)
        #expect(!machine.needsCatchUp && machine.liveMessage(stanzaID: "L1") == nil)

        var timedOut = Machine(ownJID: Self.own, cursor: .after("A1"))
        _ = timedOut.start(now: Self.now, queryID: "q1")
        #expect(timedOut.failed(nil, now: Self.now, nextQueryID: "q2") == .gaveUp("archive query failed: no answer"))
        #expect(timedOut.needsCatchUp && timedOut.cursor == .after("A1"))
    }

    @Test("a catch-up stops after the page limit, keeping the gap open from where it got to")
    func pageLimit() throws {
        var machine = Machine(ownJID: Self.own, cursor: .after("A0"), configuration: .init(maximumPages: 2))
        var (id, _) = try #require(Self.query(machine.start(now: Self.now, queryID: "q1")))
        _ = machine.received(Self.result(queryID: id, id: "A1"))
        (id, _) = try #require(Self.query(machine.answered(Self.fin(id, complete: false, last: "A1"), now: Self.now, nextQueryID: "q2")))
        _ = machine.received(Self.result(queryID: id, id: "A2"))
        guard case .gaveUp = machine.answered(Self.fin(id, complete: false, last: "A2"), now: Self.now, nextQueryID: "q3") else {
            Issue.record("no page limit")
            return
        }
        #expect(machine.needsCatchUp && machine.cursor == .after("A2"))
    }

    @Test("stanza-id counts only when our own server wrote it; cursors survive their string form")
    func stanzaIDs() throws {
        var message = Message(type: .chat, body: "x")
        message.extensions.append(XMLElement(name: "stanza-id", namespace: Machine.stanzaIDNamespace, attributes: [
            XMLAttribute(name: "by", value: "mallory@example.test"), XMLAttribute(name: "id", value: "fake"),
        ]))
        #expect(Machine.stanzaID(of: message, ownJID: Self.own) == nil)
        message.extensions.append(XMLElement(name: "stanza-id", namespace: Machine.stanzaIDNamespace, attributes: [
            XMLAttribute(name: "by", value: "Bridge@Example.test"), XMLAttribute(name: "id", value: "real"),
        ]))
        #expect(Machine.stanzaID(of: message, ownJID: Self.own) == "real")
        // As servers write it: our bare JID as bound (compared as text, not parsed).
        var exact = Message(type: .chat, body: "x")
        exact.extensions.append(XMLElement(name: "stanza-id", namespace: Machine.stanzaIDNamespace, attributes: [
            XMLAttribute(name: "by", value: "bridge@example.test"), XMLAttribute(name: "id", value: "exact"),
        ]))
        #expect(Machine.stanzaID(of: exact, ownJID: Self.own) == "exact")
        for cursor in [ArchiveCursor.after("A:1 x"), .since(Self.now)] {
            #expect(ArchiveCursor(cursor.description) == cursor)
        }
        #expect(ArchiveCursor("id:") == nil && ArchiveCursor("since:x") == nil && ArchiveCursor("other") == nil)
    }
}
