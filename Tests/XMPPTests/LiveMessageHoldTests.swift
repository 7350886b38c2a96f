import Testing
import StanzaIdentity

@testable import XMPP

/// Live messages held while an archive catch-up is due, so none overtakes older archived ones.
@Suite("LiveMessageHold")
struct LiveMessageHoldTests {
    /// Offers `values`, each keyed by its own text; records any not held.
    private func hold(_ values: [Int], in hold: inout LiveMessageHold<Int>) {
        for value in values {
            guard case .held = hold.offer(value, key: StanzaID("\(value)")) else {
                Issue.record("\(value) not held")
                return
            }
        }
    }

    @Test func withoutAHoldEveryMessageGoesOnAtOnce() {
        var hold = LiveMessageHold<Int>(limit: 10)
        guard case .passing = hold.offer(1, key: "1") else {
            Issue.record("held without a hold")
            return
        }
        #expect(hold.takeForHandOver().isEmpty)
        #expect(hold.state == .passing)
    }

    @Test func heldMessagesComeOutInArrivalOrderOnceAndAnEmptyTakeEndsTheHold() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        self.hold([1, 2, 3], in: &hold)
        #expect(hold.takeForHandOver() == [1, 2, 3])
        #expect(hold.state == .handingOver)
        #expect(hold.takeForHandOver().isEmpty)
        #expect(hold.state == .passing)
        guard case .passing = hold.offer(4, key: "4") else {
            Issue.record("held after the hold ended")
            return
        }
    }

    @Test("a message read while a batch is handed over waits behind it, for the next take")
    func messagesOfferedDuringTheHandOverWaitBehindIt() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        self.hold([1, 2], in: &hold)
        #expect(hold.takeForHandOver() == [1, 2])
        self.hold([3], in: &hold)
        #expect(hold.takeForHandOver() == [3])
        #expect(hold.takeForHandOver().isEmpty)
        #expect(!hold.isHolding)
    }

    @Test("while a batch is handed over, the limit does not apply: going on at once would overtake the batch")
    func noOverflowDuringTheHandOver() {
        var hold = LiveMessageHold<Int>(limit: 2)
        hold.begin()
        self.hold([1, 2], in: &hold)
        #expect(hold.takeForHandOver() == [1, 2])
        self.hold([3, 4, 5], in: &hold)
        #expect(hold.takeForHandOver() == [3, 4, 5])
        #expect(hold.takeForHandOver().isEmpty && !hold.isHolding)
    }

    @Test("a held message the catch-up brought itself is dropped; the others keep their order")
    func aHeldCopyOfAnArchivedMessageIsDropped() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        self.hold([1, 2, 3], in: &hold)
        let dropped = [hold.archived(key: "2"), hold.archived(key: "2"), hold.archived(key: "9")]
        #expect(dropped == [true, false, false])
        #expect(hold.heldCount == 3 && hold.archivedCount == 1)
        #expect(hold.takeForHandOver() == [1, 3])
    }

    @Test func aFullHoldHandsEverythingOverInOrderAndStopsHolding() {
        var hold = LiveMessageHold<Int>(limit: 2)
        hold.begin()
        self.hold([1, 2], in: &hold)
        guard case .overflow(let all) = hold.offer(3, key: "3") else {
            Issue.record("no overflow at the limit")
            return
        }
        #expect(all == [1, 2, 3])
        #expect(!hold.isHolding && hold.held.isEmpty)
        guard case .passing = hold.offer(4, key: "4") else {
            Issue.record("held after an overflow")
            return
        }
        // The copies it no longer holds are not dropped as archived.
        let dropped = hold.archived(key: "1")
        #expect(!dropped)
    }

    @Test func aLostConnectionDropsWhatWasHeld() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        self.hold([1, 2], in: &hold)
        #expect(hold.connectionLost() == 2)
        #expect(!hold.isHolding)
        #expect(hold.takeForHandOver().isEmpty)
    }

    @Test("a new hold starts empty with its counts at zero")
    func beginStartsAfresh() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        self.hold([1], in: &hold)
        _ = hold.archived(key: "1")
        hold.begin()
        #expect(hold.held.isEmpty && hold.heldCount == 0 && hold.archivedCount == 0)
        #expect(hold.takeForHandOver().isEmpty)
    }

    @Test func aLimitBelowOneHoldsOne() {
        var hold = LiveMessageHold<Int>(limit: 0)
        hold.begin()
        guard case .held = hold.offer(1, key: "1"), case .overflow(let all) = hold.offer(2, key: "2") else {
            Issue.record("limit not clamped to one")
            return
        }
        #expect(all == [1, 2])
    }
}
