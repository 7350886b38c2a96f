import Foundation
import TestSupport
import Testing

@testable import XMPP

/// The session's part for its lost streams (issue 40): what is in doubt, since which loss,
/// and which check under way reads a result.
@Suite("InDoubtState")
struct InDoubtStateTests {
    typealias State = InDoubtState<ManualClock.Instant>
    let start = ManualClock().now

    static func doubt(_ ids: String...) -> InDoubtMessages {
        var doubt = InDoubtMessages()
        doubt.restoredIDs = ids
        return doubt
    }

    @Test func theLossThatPutMessagesInDoubtIsKeptUntilTheyAreSettledNotALaterOne() {
        var state = State()
        #expect(state.lossToCompare == nil)
        state.connectionLostAt = self.start
        state.add(Self.doubt("a"))
        // A later loss, say during the check: the restart question still dates from the first.
        state.connectionLostAt = self.start.advanced(by: .seconds(30))
        state.add(Self.doubt("b"))
        #expect(state.lossToCompare == self.start)
        let taken = state.take()
        #expect(taken.restoredIDs == ["a", "b"])
        state.settledAll()
        #expect(state.lossToCompare == self.start.advanced(by: .seconds(30)), "settled: the last loss counts again")
    }

    @Test func aCheckCutOffGoesBackAheadOfWhatCameSince() {
        var state = State()
        state.add(Self.doubt("old"))
        let checking = state.take()
        state.add(Self.doubt("new"))
        state.putBack(checking)
        #expect(state.messages.restoredIDs == ["old", "new"])
    }

    @Test func aResultIsTakenOnlyByTheRunningCheckWhoseQueryItAnswers() throws {
        var state = State()
        let own = ArchiveCheckStateMachineTests.own
        var first = ArchiveCheckStateMachine(archive: own, inDoubt: ["m1"], sentSince: nil)
        _ = first.start(queryID: "q1")
        var other = ArchiveCheckStateMachine(archive: own, inDoubt: ["m2"], sentSince: nil)
        _ = other.start(queryID: "q2")
        state.started(first, key: "q1")
        state.started(other, key: "q2")
        let forSecond = ArchiveCheckStateMachineTests.result(queryID: "q2", stanzaID: "A1", id: "m2")
        let stray = ArchiveCheckStateMachineTests.result(queryID: "q9", stanzaID: "A2", id: "m1")
        let tookForSecond = state.checkTook(forSecond)
        let tookStray = state.checkTook(stray)
        #expect(tookForSecond)
        #expect(!tookStray, "no check asked q9: the message is the stream's")
        let (endedSecond, endedFirst) = (state.finished("q2"), state.finished("q1"))
        #expect(endedSecond?.archived == Set(["m2"]))
        #expect(endedFirst?.archived == Set<String>())
        let after = state.update("q1") { _ in true }
        #expect(after == nil, "finished checks take nothing more")
    }
}
