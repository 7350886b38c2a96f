import Foundation
import TestSupport
import Testing

@testable import XMPP

/// A message said in a room is delivered once the room reflects it (issue 39: ejabberd
/// acknowledges before its room takes a message, and a crash lost 500 of them).
@Suite("UnreflectedMessages", .timeLimit(.minutes(1)))
struct UnreflectedMessagesTests {
    typealias Instant = ManualClock.Instant
    static let room = try! JID("dev@muc.example.test")
    static let other = try! JID("ops@muc.example.test")

    static func batch(_ ids: [String], in room: JID = Self.room) -> InDoubtMessages.Batch {
        let messages = ids.map { id -> XMLElement in
            var element = XMLElement(name: "message", namespace: XMPPNamespace.client)
            element[attribute: "id"] = id
            element[attribute: "type"] = "groupchat"
            element[attribute: "to"] = room.description
            return element
        }
        return InDoubtMessages.Batch(messages: messages, waiter: OneShotWaiter<Void>(), room: room)
    }

    @Test func aBatchTheRoomReflectedBeforeTheAcknowledgementIsDoneAtOnce() {
        var waits = UnreflectedMessages<Instant>()
        let parked = waits.acknowledged(Self.batch(["a", "b"]), sentAt: nil, settled: { _ in true }, deadline: Instant())
        #expect(!parked, "Prosody reflects before it acknowledges: nothing waits")
        #expect(waits.isEmpty && waits.nextDeadline == nil)
    }

    @Test func aBatchIsDoneWhenItsLastMessageIsReflectedInAnyOrderAndAnErrorAnswerCounts() {
        var waits = UnreflectedMessages<Instant>()
        let first = Self.batch(["a", "b", "c"])
        let second = Self.batch(["d"])
        let parked = [
            waits.acknowledged(first, sentAt: nil, settled: { $0 == "a" }, deadline: Instant(offset: .seconds(10))),
            waits.acknowledged(second, sentAt: nil, settled: { _ in false }, deadline: Instant(offset: .seconds(11))),
        ]
        #expect(parked == [true, true])
        let elsewhere = waits.arrived("d", in: Self.other)
        #expect(elsewhere == nil, "another room's reflection is not ours")
        let notYet = waits.arrived("c", in: Self.room)
        #expect(notYet == nil)
        let unknown = waits.arrived("zz", in: Self.room)
        #expect(unknown == nil, "an id we are not waiting for")
        let secondDone = waits.arrived("d", in: Self.room)
        #expect(secondDone?.waiter === second.waiter, "batches complete on their own, not in order")
        let firstDone = waits.arrived("b", in: Self.room)
        #expect(firstDone?.waiter === first.waiter, "b is reflected; a was before the acknowledgement")
        #expect(waits.isEmpty)
    }

    @Test func aLostSessionHandsEverythingOverAsInDoubtWithTheOldestSendTime() {
        var waits = UnreflectedMessages<Instant>()
        let early = Date(timeIntervalSince1970: 100)
        _ = waits.acknowledged(Self.batch(["a"], in: Self.other), sentAt: Date(timeIntervalSince1970: 200), settled: { _ in false }, deadline: Instant())
        _ = waits.acknowledged(Self.batch(["b", "c"]), sentAt: early, settled: { $0 == "b" }, deadline: Instant())
        let doubt = waits.takeAll()
        #expect(doubt.batches.map(\.room) == [Self.room, Self.other], "room by room")
        #expect(doubt.batches.first?.messages.count == 2, "the whole batch: the check counts what was reflected")
        #expect(doubt.sentSince == early)
        #expect(doubt.idsByArchive == [Self.room: ["b", "c"], Self.other: ["a"]])
        #expect(waits.isEmpty)
    }

    @Test func aRoomThatNeverReflectsReleasesItsBatchesAtTheirDeadlinesOnly() {
        var waits = UnreflectedMessages<Instant>()
        let start = Instant()
        _ = waits.acknowledged(Self.batch(["a"]), sentAt: nil, settled: { _ in false }, deadline: start.advanced(by: .seconds(10)))
        _ = waits.acknowledged(Self.batch(["b"]), sentAt: nil, settled: { _ in false }, deadline: start.advanced(by: .seconds(12)))
        #expect(waits.nextDeadline == start.advanced(by: .seconds(10)))
        let early = waits.expired(now: start.advanced(by: .seconds(9)))
        #expect(early.isEmpty)
        let due = waits.expired(now: start.advanced(by: .seconds(10)))
        #expect(due.map(\.remaining) == [["a"]])
        #expect(waits.nextDeadline == start.advanced(by: .seconds(12)))
        waits.restartDeadlines(at: start.advanced(by: .seconds(30)))
        let whileDown = waits.expired(now: start.advanced(by: .seconds(29)))
        #expect(whileDown.isEmpty, "a resumed connection gives each wait its whole time again")
        let left = waits.take(in: Self.room)
        #expect(left.count == 1, "taken out of a room the session left")
        #expect(waits.isEmpty)
    }

    @Test func leavingARoomTakesItsWaitsOutAsInDoubtWithTheirOldestSendTimeAndLeavesOtherRoomsWaiting() {
        var waits = UnreflectedMessages<Instant>()
        let early = Date(timeIntervalSince1970: 100)
        _ = waits.acknowledged(Self.batch(["a"], in: Self.other), sentAt: Date(timeIntervalSince1970: 50), settled: { _ in false }, deadline: Instant())
        _ = waits.acknowledged(Self.batch(["b", "c"]), sentAt: Date(timeIntervalSince1970: 200), settled: { _ in false }, deadline: Instant())
        _ = waits.acknowledged(Self.batch(["d"]), sentAt: early, settled: { _ in false }, deadline: Instant())
        let doubt = waits.takeDoubt(in: Self.room)
        #expect(doubt.batches.map { $0.messages.compactMap { $0[attribute: "id"] } } == [["b", "c"], ["d"]], "oldest first")
        #expect(doubt.sentSince == early, "the window starts at the oldest of this room's, not another room's")
        #expect(doubt.idsByArchive == [Self.room: ["b", "c", "d"]], "looked up in this room's archive")
        #expect(!waits.isEmpty, "the other room still waits for its reflection")
        let nothing = waits.takeDoubt(in: Self.room)
        #expect(nothing.isEmpty)
        #expect(waits.arrived("a", in: Self.other) != nil)
        #expect(waits.isEmpty)
    }

    @Test func aRoomsDoubtIsTakenWithTheSessionsAndFailedWhenTheSessionStops() async throws {
        var table = RoomTable<Instant>()
        for room in [Self.room, Self.other] {
            table.entries[room] = RoomTable<Instant>.entry(
                for: RoomConfiguration(jid: room, nick: "bridge"), timings: RoomTimings(), catchUp: nil, cursor: nil)
        }
        var doubt = InDoubtMessages()
        doubt.batches = [Self.batch(["a"])]
        doubt.sentSince = Date(timeIntervalSince1970: 300)
        table.entries[Self.room]?.leftUnreflected = doubt
        var older = InDoubtMessages()
        older.batches = [Self.batch(["z"], in: Self.other)]
        older.sentSince = Date(timeIntervalSince1970: 100)
        table.entries[Self.other]?.leftUnreflected = older
        let taken = table.takeLeftUnreflected()
        #expect(taken.idsByArchive == [Self.room: ["a"], Self.other: ["z"]])
        #expect(taken.sentSince == Date(timeIntervalSince1970: 100))
        #expect(table.entries.values.allSatisfy { $0.leftUnreflected.isEmpty })

        let kept = Self.batch(["b"])
        table.entries[Self.room]?.leftUnreflected.batches = [kept]
        table.failWaiting(XMPPSessionError.stopped)
        #expect(table.entries.values.allSatisfy { $0.leftUnreflected.isEmpty })
        await #expect(throws: XMPPSessionError.self, "its sender sends it again") { try await kept.waiter.value() }
    }
}
