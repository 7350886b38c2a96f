import Foundation
import Testing

@testable import XMPP

/// Looking in-doubt messages up in the account's own archive (issue 22), without sockets:
/// each step of the check, from the first query to what is sent again.
@Suite("ArchiveCheckStateMachine")
struct ArchiveCheckStateMachineTests {
    typealias Machine = ArchiveCheckStateMachine
    typealias Support = ArchiveCatchUpStateMachineTests
    static let own = try! JID("home@example.test/bridge")
    static let sent = Date(timeIntervalSince1970: 1_790_000_000)

    static func machine(_ ids: [String], sentSince: Date? = Self.sent, pages: Int = 20) -> Machine {
        Machine(archive: Self.own, inDoubt: Set(ids), sentSince: sentSince, configuration: .init(pageSize: 50, maximumPages: pages, clockSkew: .seconds(60)))
    }

    /// An archive result: our own message `id` (origin-id `originID`) to bob, or someone else's.
    static func result(queryID: String, stanzaID: String, id: String, originID: String? = nil, from: String = "home@example.test/bridge", outerFrom: String? = nil) -> XMLElement {
        var inner = XMLElement(name: "message", namespace: XMPPNamespace.client)
        inner[attribute: "from"] = from
        inner[attribute: "to"] = "bob@example.test"
        inner[attribute: "id"] = id
        if let originID {
            var origin = XMLElement(name: "origin-id", namespace: "urn:xmpp:sid:0")
            origin[attribute: "id"] = originID
            inner.append(origin)
        }
        var forwarded = XMLElement(name: "forwarded", namespace: "urn:xmpp:forward:0")
        forwarded.append(inner)
        var result = XMLElement(name: "result", namespace: "urn:xmpp:mam:2")
        result[attribute: "queryid"] = queryID
        result[attribute: "id"] = stanzaID
        result.append(forwarded)
        var outer = XMLElement(name: "message", namespace: XMPPNamespace.client)
        if let outerFrom { outer[attribute: "from"] = outerFrom }
        outer.append(result)
        return outer
    }

    static func fin(_ id: String, complete: Bool, first: String?) -> IQ {
        var fin = XMLElement(name: "fin", namespace: "urn:xmpp:mam:2")
        if complete { fin[attribute: "complete"] = "true" }
        var set = XMLElement(name: "set", namespace: "http://jabber.org/protocol/rsm")
        if let first {
            var element = XMLElement(name: "first", namespace: "http://jabber.org/protocol/rsm")
            element.append(text: first)
            set.append(element)
        }
        fin.append(set)
        return IQ(type: .result, id: id, payload: fin)
    }

    static func query(_ action: Machine.Action?) -> (id: String, query: XMLElement)? {
        guard case .query(let iq) = action, let payload = iq.payload else { return nil }
        return (iq.id, payload)
    }

    @Test func theFirstQueryAsksForTheArchivesLastPageFromTheWindowStart() throws {
        var machine = Self.machine(["r1", "r2"])
        let (id, query) = try #require(Self.query(machine.start(queryID: "q1")))
        #expect(id == "q1" && query[attribute: "queryid"] == "q1")
        #expect(Support.rsm(query, "max")?.text == "50")
        #expect(Support.rsm(query, "before") != nil && Support.rsm(query, "before")?.text == "", "an empty <before/>: the last page")
        // The window opens a clock skew before the oldest send.
        #expect(Support.field(query, "start") == ArchiveCatchUpStateMachine.timestamp(Self.sent.addingTimeInterval(-60)))
        #expect(machine.currentQueryID == "q1")
    }

    @Test func aRoomsArchiveIsAskedAtTheRoomAndCountsOurMessagesUnderAnyNickButNoOtherRoomsResults() throws {
        let room = try JID("dev@muc.example.test")
        var machine = Machine(archive: room, room: true, inDoubt: ["r1", "r2", "r3"], sentSince: Self.sent)
        guard case .query(let iq) = machine.start(queryID: "q1") else { Issue.record("no query"); return }
        #expect(iq.header.to == room, "XEP-0313 on the room's JID")
        let inRoom = { (stanzaID: String, id: String, nick: String, outer: String?) in
            Self.result(queryID: "q1", stanzaID: stanzaID, id: id, originID: id, from: "dev@muc.example.test/\(nick)", outerFrom: outer)
        }
        let taken1 = machine.received(inRoom("a1", "r1", "bridge", "dev@muc.example.test"))
        #expect(taken1)
        let taken2 = machine.received(inRoom("a2", "r2", "bridge_", "dev@muc.example.test"))
        #expect(taken2, "our nick may have changed; the origin-id is ours")
        let taken3 = machine.received(inRoom("a3", "r3", "bridge", "other@muc.example.test"))
        #expect(taken3, "another room's result for our query is swallowed, never believed")
        let taken4 = machine.received(Self.result(queryID: "q1", stanzaID: "a4", id: "r3", originID: "r3"))
        #expect(taken4, "a message from the account itself is no room message")
        let end = machine.answered(Self.fin("q1", complete: true, first: "a1"), nextQueryID: "q2")
        #expect(end == .finished(archived: ["r1", "r2"], pages: 1, ending: .windowExhausted))
        #expect(machine.uncertain(serverRestarted: true, oneStanzaAtATime: false).isEmpty, "what the room archived is in the room, crash or not")
        // The account's own archive is asked without a `to`.
        var own = Self.machine(["r1"])
        guard case .query(let ownQuery) = own.start(queryID: "q1") else { Issue.record("no query"); return }
        #expect(ownQuery.header.to == nil)
    }

    @Test func withoutASendTimeTheWholeArchiveIsTheWindow() throws {
        var machine = Self.machine(["r1"], sentSince: nil)
        let (_, query) = try #require(Self.query(machine.start(queryID: "q1")))
        #expect(Support.field(query, "start") == nil)
    }

    @Test func nothingInDoubtNeedsNoQuery() {
        var machine = Self.machine([])
        let start = machine.start(queryID: "q1")
        #expect(start == .finished(archived: [], pages: 0, ending: .nothingInDoubt))
    }

    @Test func foundByOriginIDOrMessageIDAndEverythingFoundEndsTheCheck() {
        var machine = Self.machine(["r1", "r2", "r3"])
        _ = machine.start(queryID: "q1")
        for result in [
            Self.result(queryID: "q1", stanzaID: "a1", id: "other", originID: "r1"), Self.result(queryID: "q1", stanzaID: "a2", id: "r2"),
            Self.result(queryID: "q1", stanzaID: "a3", id: "r3", originID: "r3"),
        ] {
            let taken = machine.received(result)
            #expect(taken)
        }
        let answer = machine.answered(Self.fin("q1", complete: false, first: "a1"), nextQueryID: "q2")
        #expect(answer == .finished(archived: ["r1", "r2", "r3"], pages: 1, ending: .allFound))
        #expect(machine.newestArchived == "r3")
    }

    @Test func whatIsMissingIsLookedForOnOlderPagesUntilTheWindowEnds() throws {
        var machine = Self.machine(["r1", "r2"])
        _ = machine.start(queryID: "q1")
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a9", id: "unrelated"))
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a10", id: "r2"))
        let (id, query) = try #require(Self.query(machine.answered(Self.fin("q1", complete: false, first: "a9"), nextQueryID: "q2")))
        #expect(id == "q2" && Support.rsm(query, "before")?.text == "a9", "the next page ends before this one's first")
        let end = machine.answered(Self.fin("q2", complete: true, first: nil), nextQueryID: "q3")
        #expect(end == .finished(archived: ["r2"], pages: 2, ending: .windowExhausted))
        #expect(machine.newestArchived == "r2", "the newest found is on the first page that had any")
    }

    @Test func thePageLimitEndsTheCheck() {
        var machine = Self.machine(["r1"], pages: 2)
        _ = machine.start(queryID: "q1")
        _ = machine.answered(Self.fin("q1", complete: false, first: "a5"), nextQueryID: "q2")
        let end = machine.answered(Self.fin("q2", complete: false, first: "a3"), nextQueryID: "q3")
        #expect(end == .finished(archived: [], pages: 2, ending: .pageLimit(pages: 2)))
    }

    @Test func resultsNotFromOurArchiveOrNotOurQueryCountForNothing() {
        var machine = Self.machine(["r1"])
        _ = machine.start(queryID: "q1")
        let other = machine.received(Self.result(queryID: "other", stanzaID: "a1", id: "r1"))
        #expect(!other, "another query's result is not ours to read")
        let mallory = machine.received(Self.result(queryID: "q1", stanzaID: "a1", id: "r1", outerFrom: "mallory@example.test"))
        #expect(mallory, "swallowed, not believed")
        let bobs = machine.received(Self.result(queryID: "q1", stanzaID: "a2", id: "r1", from: "bob@example.test/phone"))
        #expect(bobs, "bob's message with our id proves nothing")
        #expect(machine.archived.isEmpty)
        let ours = machine.received(Self.result(queryID: "q1", stanzaID: "a3", id: "r1", outerFrom: "home@example.test"))
        #expect(ours)
        #expect(machine.archived == ["r1"])
    }

    @Test func aFailedQueryLeavesEverythingToBeSentAgain() {
        var machine = Self.machine(["r1", "r2"])
        _ = machine.start(queryID: "q1")
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a1", id: "r1"))
        let failed = machine.failed("feature-not-implemented", error: StanzaError(.featureNotImplemented), nextQueryID: "q2")
        #expect(failed == .finished(archived: ["r1"], pages: 0, ending: .archiveUnreadable("feature-not-implemented")), "a lasting error is not asked again")
        #expect(machine.newestArchived == "r1", "what the failed page found counts as after an answer")
        let again = machine.failed("again", error: StanzaError(.internalServerError), nextQueryID: "q3")
        #expect(again == nil, "nothing is under way any more")
        let late = machine.answered(Self.fin("q1", complete: true, first: nil), nextQueryID: "q2")
        #expect(late == nil)
    }

    @Test func aTransientFailureAsksForTheSamePageAgainWaitingLongerEachTimeThenGivesUp() throws {
        var machine = Self.machine(["r1", "r2"])
        _ = machine.start(queryID: "q1")
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a9", id: "unrelated"))
        _ = machine.answered(Self.fin("q1", complete: false, first: "a9"), nextQueryID: "q2")
        let first = machine.failed("internal-server-error", error: StanzaError(.internalServerError), nextQueryID: "q3")
        guard case .retry(let retry, let wait, _) = first else { Issue.record("expected a retry, got \(String(describing: first))"); return }
        #expect(retry.id == "q3" && wait == .seconds(1))
        let query = try #require(retry.payload)
        #expect(Support.rsm(query, "before")?.text == "a9", "the same page: the one that failed")
        #expect(query[attribute: "queryid"] == "q3")
        let stale = machine.received(Self.result(queryID: "q2", stanzaID: "a8", id: "r1"))
        #expect(!stale && machine.archived.isEmpty, "the failed query's results are not believed")
        let second = machine.failed("internal-server-error", error: StanzaError(.internalServerError), nextQueryID: "q4")
        guard case .retry(let again, let longer, _) = second else { Issue.record("expected a second retry"); return }
        #expect(again.id == "q4" && longer == .seconds(2))
        let last = machine.failed("internal-server-error", error: StanzaError(.internalServerError), nextQueryID: "q5")
        #expect(last == .finished(archived: [], pages: 1, ending: .archiveUnreadable("internal-server-error (asked 3 times)")))
    }

    @Test func whetherAFailureIsAskedAgainIsTheErrorsOwnSay() {
        for (error, asked) in [
            (StanzaError(.internalServerError), true), (StanzaError(.resourceConstraint), true), (StanzaError(.notAcceptable, type: .wait), true),
            (StanzaError(.itemNotFound), false), (StanzaError(.serviceUnavailable), false), (StanzaError(.forbidden), false), (nil, false),
        ] as [(StanzaError?, Bool)] {
            var machine = Self.machine(["r1"])
            _ = machine.start(queryID: "q1")
            let next = machine.failed("x", error: error, nextQueryID: "q2")
            if case .retry = next { #expect(asked, "\(String(describing: error)) is not asked again") } else { #expect(!asked, "\(String(describing: error)) is asked again") }
        }
    }

    @Test func aRetryThatIsAnsweredCarriesOnAsIfNothingFailed() throws {
        var machine = Self.machine(["r1"])
        _ = machine.start(queryID: "q1")
        _ = machine.failed("internal-server-error", error: StanzaError(.internalServerError), nextQueryID: "q2")
        let result = machine.received(Self.result(queryID: "q2", stanzaID: "a1", id: "r1"))
        #expect(result)
        let end = machine.answered(Self.fin("q2", complete: true, first: "a1"), nextQueryID: "q3")
        #expect(end == .finished(archived: ["r1"], pages: 1, ending: .allFound))
        #expect(machine.newestArchived == "r1")
    }

    @Test func aRestartedServerLeavesTheNewestUncertainOrAllOfThemWhenItRoutesBetweenProcesses() {
        var machine = Self.machine(["r1", "r2", "r3"])
        _ = machine.start(queryID: "q1")
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a1", id: "r1"))
        _ = machine.received(Self.result(queryID: "q1", stanzaID: "a2", id: "r2"))
        _ = machine.answered(Self.fin("q1", complete: true, first: "a1"), nextQueryID: "q2")
        #expect(machine.uncertain(serverRestarted: false, oneStanzaAtATime: true).isEmpty, "a server that kept running routed all it archived")
        #expect(machine.uncertain(serverRestarted: true, oneStanzaAtATime: true) == ["r2"])
        #expect(machine.uncertain(serverRestarted: nil, oneStanzaAtATime: true) == ["r2"], "unknown counts as restarted")
        #expect(machine.uncertain(serverRestarted: true, oneStanzaAtATime: false) == ["r1", "r2"])
    }
}
