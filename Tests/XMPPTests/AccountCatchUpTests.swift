import Foundation
import Testing

@testable import XMPP

/// The session's catch-up part (issue 40): archive results read and tagged, live messages
/// tagged or held, a lost connection reopening the gap.
@Suite("AccountCatchUp")
struct AccountCatchUpTests {
    typealias Support = ArchiveCatchUpStateMachineTests
    static let own = Support.own

    /// A live chat message from alice, archived by our account as `stanzaID`.
    static func live(_ stanzaID: String) throws -> Message {
        var message = Message(type: .chat, to: Self.own, id: "m-\(stanzaID)", body: "hi")
        message.from = try JID("alice@example.test/phone")
        var element = XMLElement(name: "stanza-id", namespace: ArchiveCatchUpStateMachine.stanzaIDNamespace)
        element[attribute: "by"] = Self.own.bare.description
        element[attribute: "id"] = stanzaID
        message.extensions.append(element)
        return message
    }

    @Test func withoutACatchUpNothingIsAResultAndALiveMessageGetsOnlyItsStanzaID() throws {
        var catchUp = AccountCatchUp(machine: nil, holdLimit: 10)
        let reading = catchUp.read(Support.result(queryID: "q", id: "A1"))
        #expect(reading == nil)
        var message = try Self.live("A7")
        catchUp.tag(&message, ownJID: Self.own)
        #expect(message.stanzaID == "A7" && message.archiveCursor == nil)
    }

    @Test func aResultOfTheQueryUnderWayIsEmittedWithItsCursorAndALiveMessageOnAContinuousStreamMovesIt() throws {
        var catchUp = AccountCatchUp(machine: ArchiveCatchUpStateMachine(ownJID: Self.own, cursor: .after("A0"), configuration: .init()), holdLimit: 10)
        catchUp.streamStarted(continuesLast: false)
        #expect(catchUp.liveHold.isHolding, "a gap after A0: live messages wait for the catch-up")
        var held = try Self.live("A2")
        catchUp.tag(&held, ownJID: Self.own)
        #expect(held.stanzaID == "A2" && held.archiveCursor == nil, "held: its cursor comes when it is handed over")
        guard case .query(let query) = catchUp.machine?.start(now: Support.now, queryID: "q1") else {
            Issue.record("no query")
            return
        }
        #expect(query.id == "q1")
        guard case .emit(let archived) = catchUp.read(Support.result(queryID: "q1", id: "A1")) else {
            Issue.record("the result was not emitted")
            return
        }
        #expect(archived.stanzaID == "A1" && archived.archiveCursor == .after("A1"))
        let dropped = catchUp.connectionLost()
        #expect(dropped == 0, "nothing was offered to the hold")
    }
}
