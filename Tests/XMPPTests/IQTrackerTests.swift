import Testing
import TestSupport

@testable import XMPP

/// Matching IQ answers to requests, including the sender check of RFC 6120 §10.1 that
/// keeps a stranger from answering for someone else.
@Suite("IQTracker")
struct IQTrackerTests {
    typealias Tracker = IQTracker<ManualClock.Instant>

    static let ownJID = "juliet@example.com/balcony"
    static let t0 = ManualClock.Instant()

    static func tracker() throws -> Tracker {
        Tracker(ownJID: try JID(ownJID))
    }

    static func reply(_ type: IQ.Kind = .result, id: String, from: String?) throws -> IQ {
        var iq = IQ(type: type, id: id, to: try JID(ownJID), payload: nil)
        iq.from = try from.map { (text) throws in try JID(text) }
        return iq
    }

    static func at(_ seconds: Int) -> ManualClock.Instant {
        t0.advanced(by: .seconds(seconds))
    }

    @Test func replyFromTheAddresseeMatches() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "v1", to: try JID("romeo@example.net/orchard"), deadline: Self.at(30))
        #expect(tracker.pendingCount == 1)
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: "romeo@example.net/orchard")) == .matched(id: "v1"))
        #expect(tracker.pendingCount == 0)
        // A second answer is no longer expected.
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: "romeo@example.net/orchard")) == .unknown(id: "v1"))
    }

    @Test func errorReplyMatchesToo() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "e1", to: try JID("romeo@example.net/orchard"), deadline: Self.at(30))
        let reply = try Self.reply(.error, id: "e1", from: "romeo@example.net/orchard")
        #expect(tracker.responseReceived(reply) == .matched(id: "e1"))
    }

    @Test func addresseeComparisonUsesJIDEquality() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "c1", to: try JID("Romeo@Example.NET/orchard"), deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "c1", from: "romeo@example.net/orchard")) == .matched(id: "c1"))
    }

    @Test func strangerIsSpoofedAndRealReplyStillMatches() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "v1", to: try JID("romeo@example.net/orchard"), deadline: Self.at(30))
        let stranger = try JID("mallory@evil.example/x")
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: "mallory@evil.example/x")) == .spoofed(id: "v1", from: stranger))
        #expect(tracker.isPending("v1"))
        // Another resource or the bare JID of the addressee is not the addressee either.
        let bare = try JID("romeo@example.net")
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: "romeo@example.net")) == .spoofed(id: "v1", from: bare))
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: nil)) == .spoofed(id: "v1", from: nil))
        #expect(tracker.pendingCount == 1)
        #expect(tracker.responseReceived(try Self.reply(id: "v1", from: "romeo@example.net/orchard")) == .matched(id: "v1"))
        #expect(tracker.pendingCount == 0)
    }

    @Test(arguments: [nil, "example.com", "juliet@example.com", "juliet@example.com/balcony"])
    func serverHandledRequestAcceptsServerAddresses(from: String?) throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "r1", to: nil, deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "r1", from: from)) == .matched(id: "r1"))
    }

    @Test(arguments: ["romeo@example.com", "romeo@example.com/orchard", "juliet@example.com/other", "evil.example", "example.com/res"])
    func serverHandledRequestRejectsOthers(from: String) throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "r1", to: nil, deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "r1", from: from)) == .spoofed(id: "r1", from: try JID(from)))
        #expect(tracker.isPending("r1"))
    }

    @Test func requestToOwnBareJIDAcceptsNoFromOrBareFrom() throws {
        var tracker = try Self.tracker()
        let bare = try JID("juliet@example.com")
        tracker.requestSent(id: "a", to: bare, deadline: Self.at(30))
        tracker.requestSent(id: "b", to: bare, deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "a", from: nil)) == .matched(id: "a"))
        #expect(tracker.responseReceived(try Self.reply(id: "b", from: "juliet@example.com")) == .matched(id: "b"))
    }

    @Test func requestToOwnBareJIDRejectsDomainAndFullJID() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "a", to: try JID("juliet@example.com"), deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "a", from: "example.com")) == .spoofed(id: "a", from: try JID("example.com")))
        let full = try JID("juliet@example.com/balcony")
        #expect(tracker.responseReceived(try Self.reply(id: "a", from: "juliet@example.com/balcony")) == .spoofed(id: "a", from: full))
        #expect(tracker.isPending("a"))
    }

    @Test func requestToSomeoneElseRejectsMissingFrom() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "x", to: try JID("romeo@example.net"), deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "x", from: nil)) == .spoofed(id: "x", from: nil))
        #expect(tracker.responseReceived(try Self.reply(id: "x", from: "romeo@example.net")) == .matched(id: "x"))
    }

    @Test func ownJIDCanBeUpdatedAfterRebinding() throws {
        var tracker = try Self.tracker()
        tracker.ownJID = try JID("juliet@example.org/tomb")
        tracker.requestSent(id: "r", to: nil, deadline: Self.at(30))
        #expect(tracker.responseReceived(try Self.reply(id: "r", from: "example.com")) == .spoofed(id: "r", from: try JID("example.com")))
        #expect(tracker.responseReceived(try Self.reply(id: "r", from: "example.org")) == .matched(id: "r"))
    }

    @Test func unknownIDAndRequestsAreNotAnswers() throws {
        var tracker = try Self.tracker()
        #expect(tracker.responseReceived(try Self.reply(id: "nope", from: nil)) == .unknown(id: "nope"))
        tracker.requestSent(id: "q", to: nil, deadline: Self.at(30))
        // A get/set with the same id is a request from the peer, not our answer.
        #expect(tracker.responseReceived(try Self.reply(.get, id: "q", from: nil)) == .unknown(id: "q"))
        #expect(tracker.responseReceived(try Self.reply(.set, id: "q", from: nil)) == .unknown(id: "q"))
        #expect(tracker.isPending("q"))
    }

    @Test func expiryIsOrderedByDeadlineThenSendingOrder() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "late", to: nil, deadline: Self.at(30))
        tracker.requestSent(id: "early", to: nil, deadline: Self.at(10))
        tracker.requestSent(id: "tieA", to: nil, deadline: Self.at(20))
        tracker.requestSent(id: "tieB", to: nil, deadline: Self.at(20))
        tracker.requestSent(id: "never", to: nil, deadline: Self.at(100))
        #expect(tracker.nextDeadline == Self.at(10))

        #expect(tracker.expire(now: Self.at(5)) == [])
        #expect(tracker.expire(now: Self.at(30)) == ["early", "tieA", "tieB", "late"])
        #expect(tracker.pendingCount == 1)
        #expect(tracker.nextDeadline == Self.at(100))
        #expect(tracker.responseReceived(try Self.reply(id: "early", from: nil)) == .unknown(id: "early"))
        #expect(tracker.expire(now: Self.at(99)) == [])
        #expect(tracker.expire(now: Self.at(100)) == ["never"])
        #expect(tracker.nextDeadline == nil)
    }

    @Test func expiryWithManualClock() throws {
        let clock = ManualClock()
        var tracker = try Self.tracker()
        tracker.requestSent(id: "a", to: nil, deadline: clock.now.advanced(by: .seconds(2)))
        tracker.requestSent(id: "b", to: nil, deadline: clock.now.advanced(by: .seconds(1)))
        clock.advance(by: .milliseconds(1500))
        #expect(tracker.expire(now: clock.now) == ["b"])
        clock.advance(by: .seconds(1))
        #expect(tracker.expire(now: clock.now) == ["a"])
    }

    @Test func matchedRequestDoesNotExpire() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "a", to: nil, deadline: Self.at(1))
        _ = tracker.responseReceived(try Self.reply(id: "a", from: nil))
        #expect(tracker.expire(now: Self.at(10)) == [])
    }

    @Test func reusedIDReplacesTheEarlierRequest() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "a", to: try JID("romeo@example.net"), deadline: Self.at(1))
        tracker.requestSent(id: "a", to: nil, deadline: Self.at(50))
        #expect(tracker.pendingCount == 1)
        #expect(tracker.nextDeadline == Self.at(50))
        #expect(tracker.responseReceived(try Self.reply(id: "a", from: "example.com")) == .matched(id: "a"))
    }

    @Test func cancelAllReturnsIDsInSendingOrder() throws {
        var tracker = try Self.tracker()
        tracker.requestSent(id: "one", to: nil, deadline: Self.at(30))
        tracker.requestSent(id: "two", to: nil, deadline: Self.at(10))
        tracker.requestSent(id: "three", to: try JID("romeo@example.net"), deadline: Self.at(20))
        #expect(tracker.cancelAll() == ["one", "two", "three"])
        #expect(tracker.pendingCount == 0)
        #expect(tracker.nextDeadline == nil)
        #expect(tracker.cancelAll() == [])
    }
}
