import Foundation
import Testing

@testable import XMPP

/// Splitting what a lost session left unacknowledged among the senders waiting on it (issue 22).
@Suite("InDoubtMessages")
struct InDoubtMessagesTests {
    static func message(_ id: String, type: String = "chat") -> XMLElement {
        var element = XMLElement(name: "message", namespace: XMPPNamespace.client)
        element[attribute: "id"] = id
        element[attribute: "type"] = type
        return element
    }

    static func presence() -> XMLElement { XMLElement(name: "presence", namespace: XMPPNamespace.client) }

    @Test func eachSendersBatchKeepsItsMessagesAndTheOldestSendTimeIsKept() {
        let (first, second) = (OneShotWaiter<Void>(), OneShotWaiter<Void>())
        let early = Date(timeIntervalSince1970: 100)
        // Numbers 11…15: two messages (batch 1, up to 12), a presence, two messages (batch 2, up to 15).
        let (doubt, unsettled) = InDoubtMessages.split(
            pending: [Self.message("a"), Self.message("b"), Self.presence(), Self.message("c"), Self.message("d")], acknowledged: 10,
            waiters: [.init(number: 12, waiter: first, sentAt: early, count: 2), .init(number: 15, waiter: second, sentAt: Date(timeIntervalSince1970: 200), count: 2)]
        )
        #expect(unsettled.isEmpty)
        #expect(doubt.batches.map { $0.messages.map { $0[attribute: "id"] ?? "" } } == [["a", "b"], ["c", "d"]])
        #expect(doubt.batches.first?.waiter === first && doubt.batches.last?.waiter === second)
        #expect(doubt.sentSince == early)
        #expect(doubt.ids == ["a", "b", "c", "d"])
    }

    @Test func roomBatchesPlainWaitsAndStrayNumbersAreLeftToTheirSenders() {
        let (room, wait, chat, stray) = (OneShotWaiter<Void>(), OneShotWaiter<Void>(), OneShotWaiter<Void>(), OneShotWaiter<Void>())
        let (doubt, unsettled) = InDoubtMessages.split(
            pending: [Self.message("g", type: "groupchat"), Self.message("c")], acknowledged: UInt32.max,
            waiters: [.init(number: UInt32.max, waiter: stray, sentAt: nil, count: 0), .init(number: 0, waiter: room, sentAt: Date(), count: 1), .init(number: 1, waiter: wait, sentAt: nil, count: 0), .init(number: 1, waiter: chat, sentAt: Date(), count: 1)]
        )
        #expect(unsettled.count == 3 && [room, wait, stray].allSatisfy { waiter in unsettled.contains { $0 === waiter } })
        #expect(doubt.batches.count == 1 && doubt.batches.first?.waiter === chat, "numbers wrap modulo 2³²; a stray waiter blocks no later one")
        #expect(doubt.batches.first?.messages.map { $0[attribute: "id"] ?? "" } == ["c"])
    }

    static func said(_ id: String, in room: String) -> XMLElement {
        var element = Self.message(id, type: "groupchat")
        element[attribute: "to"] = room
        return element
    }

    @Test func aBatchSaidInOneRoomIsLookedUpThereAndOneThatMixesTargetsIsLeftToItsSender() throws {
        let (inRoom, mixed, chat) = (OneShotWaiter<Void>(), OneShotWaiter<Void>(), OneShotWaiter<Void>())
        let room = try JID("dev@muc.example.test")
        let (doubt, unsettled) = InDoubtMessages.split(
            pending: [Self.said("g1", in: "dev@muc.example.test"), Self.said("g2", in: "dev@muc.example.test"), Self.said("g3", in: "dev@muc.example.test"), Self.message("c1"), Self.message("c2")],
            acknowledged: 0,
            waiters: [.init(number: 2, waiter: inRoom, sentAt: Date(), count: 2), .init(number: 4, waiter: mixed, sentAt: Date(), count: 2), .init(number: 5, waiter: chat, sentAt: Date(), count: 1)]
        )
        #expect(unsettled.count == 1 && unsettled.first === mixed)
        #expect(doubt.batches.map(\.room) == [room, nil])
        #expect(doubt.idsByArchive == [room: ["g1", "g2"], nil: ["c2"]])
    }

    @Test func theRestoredIdsAreLookedUpInTheAccountsArchive() throws {
        var doubt = InDoubtMessages()
        doubt.restoredIDs = ["r1", "r2"]
        #expect(doubt.idsByArchive == [nil: ["r1", "r2"]])
    }

    @Test func onlyDoubtLeftEntirelyByStreamsTheServerEndedItselfIsVouchedForByItsArchive() {
        let batch = { InDoubtMessages.Batch(messages: [Self.message("a")], waiter: OneShotWaiter<Void>()) }
        var ended = InDoubtMessages()
        ended.batches = [batch()]
        ended.serverEndedStream = true
        var cut = InDoubtMessages()
        cut.batches = [batch()]
        var merged = InDoubtMessages()
        merged.merge(ended)
        #expect(merged.serverEndedStream, "merged into nothing, it keeps what it was")
        merged.merge(InDoubtMessages())
        #expect(merged.serverEndedStream, "nothing more in doubt changes nothing")
        merged.merge(cut)
        #expect(!merged.serverEndedStream, "one cut connection among them and the archive alone cannot vouch")
    }

    @Test func onlyDoubtWrittenOnOneSessionKeepsThatSessionsId() {
        var inherited = InDoubtMessages()
        inherited.restoredIDs = ["r1"]
        inherited.sessionID = "sm-1"
        var later = InDoubtMessages()
        later.batches = [InDoubtMessages.Batch(messages: [Self.message("a")], waiter: OneShotWaiter<Void>())]
        var merged = InDoubtMessages()
        merged.merge(inherited)
        #expect(merged.sessionID == "sm-1")
        merged.merge(InDoubtMessages())
        #expect(merged.sessionID == "sm-1")
        merged.merge(later)
        #expect(merged.sessionID == nil, "doubt of another stream too: a resumption of sm-1 proves nothing about it")
    }

    @Test func aBatchTheServerAcknowledgedInPartKeepsOnlyItsUnacknowledgedMessages() {
        let batch = OneShotWaiter<Void>()
        // The batch is numbers 9…12; the server acknowledged up to 10.
        let (doubt, unsettled) = InDoubtMessages.split(pending: [Self.message("c"), Self.message("d")], acknowledged: 10, waiters: [.init(number: 12, waiter: batch, sentAt: Date(), count: 4)])
        #expect(unsettled.isEmpty)
        #expect(doubt.batches.first?.waiter === batch && doubt.ids == ["c", "d"])
    }

    @Test func aRoomBatchTheServerAcknowledgedInPartIsLookedUpWhole() throws {
        let batch = OneShotWaiter<Void>()
        let room = try JID("dev@muc.example.test")
        let said = ["g1", "g2", "g3"].map { Self.said($0, in: "dev@muc.example.test") }
        // Numbers 1…3; the server acknowledged 1 (Prosody 0.12, stopping, counts a message
        // its room refuses): acknowledged is not reflected, so g1 is in doubt too.
        let (doubt, unsettled) = InDoubtMessages.split(
            pending: Array(said.dropFirst()), acknowledged: 1, waiters: [.init(number: 3, waiter: batch, sentAt: Date(), count: 3, room: room, messages: said)]
        )
        #expect(unsettled.isEmpty)
        #expect(doubt.batches.first?.waiter === batch && doubt.idsByArchive == [room: ["g1", "g2", "g3"]])
    }

    @Test func messagesOthersSentBetweenBatchesAreNotInThem() {
        let batch = OneShotWaiter<Void>()
        // A receipt sent with send() (number 1), then the batch of two (2…3).
        let (doubt, unsettled) = InDoubtMessages.split(
            pending: [Self.message("receipt"), Self.message("a"), Self.message("b")], acknowledged: 0, waiters: [.init(number: 3, waiter: batch, sentAt: Date(), count: 2)]
        )
        #expect(unsettled.isEmpty)
        #expect(doubt.ids == ["a", "b"])
    }

    @Test func settlingTellsSendersWhoseMessagesAreAllArchivedAndResendsOnlyTheRest() {
        let (all, some) = (OneShotWaiter<Void>(), OneShotWaiter<Void>())
        var doubt = InDoubtMessages()
        doubt.batches = [.init(messages: [Self.message("a"), Self.message("b")], waiter: all), .init(messages: [Self.message("c"), Self.message("d")], waiter: some)]
        let (settled, resend) = doubt.settle(archived: ["a", "b", "c"])
        #expect(settled.count == 1 && settled.first === all)
        #expect(resend.count == 1 && resend.first?.waiter === some && resend.first?.messages.map { $0[attribute: "id"] ?? "" } == ["d"])
    }

    @Test func mergingKeepsTheOlderFirst() {
        var older = InDoubtMessages()
        older.restoredIDs = ["x"]
        older.sentSince = Date(timeIntervalSince1970: 50)
        var newer = InDoubtMessages()
        newer.restoredIDs = ["y"]
        newer.sentSince = Date(timeIntervalSince1970: 10)
        older.merge(newer)
        #expect(older.restoredIDs == ["x", "y"] && older.sentSince == Date(timeIntervalSince1970: 10))
        #expect(!older.isEmpty)
    }
}
