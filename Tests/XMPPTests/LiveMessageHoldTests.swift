import Testing

@testable import XMPP

/// Live messages held while an archive catch-up is due, so none overtakes older archived ones.
@Suite("LiveMessageHold")
struct LiveMessageHoldTests {
    @Test func withoutAHoldEveryMessageGoesOnAtOnce() {
        var hold = LiveMessageHold<Int>(limit: 10)
        guard case .notHolding = hold.offer(1) else {
            Issue.record("held without a hold")
            return
        }
        #expect(hold.release().isEmpty)
    }

    @Test func heldMessagesComeOutInArrivalOrderOnceAndTheHoldEnds() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        for value in 1...3 {
            guard case .held = hold.offer(value) else {
                Issue.record("\(value) not held")
                return
            }
        }
        #expect(hold.release() == [1, 2, 3])
        #expect(!hold.isHolding)
        #expect(hold.release().isEmpty)
        guard case .notHolding = hold.offer(4) else {
            Issue.record("held after the release")
            return
        }
    }

    @Test func aFullHoldHandsEverythingOverInOrderAndStopsHolding() {
        var hold = LiveMessageHold<Int>(limit: 2)
        hold.begin()
        _ = hold.offer(1)
        _ = hold.offer(2)
        guard case .overflow(let all) = hold.offer(3) else {
            Issue.record("no overflow at the limit")
            return
        }
        #expect(all == [1, 2, 3])
        #expect(!hold.isHolding && hold.held.isEmpty)
        guard case .notHolding = hold.offer(4) else {
            Issue.record("held after an overflow")
            return
        }
    }

    @Test func aLostConnectionDropsWhatWasHeld() {
        var hold = LiveMessageHold<Int>(limit: 10)
        hold.begin()
        _ = hold.offer(1)
        _ = hold.offer(2)
        #expect(hold.connectionLost() == 2)
        #expect(!hold.isHolding)
        #expect(hold.release().isEmpty)
    }

    @Test func aLimitBelowOneHoldsOne() {
        var hold = LiveMessageHold<Int>(limit: 0)
        hold.begin()
        guard case .held = hold.offer(1), case .overflow(let all) = hold.offer(2) else {
            Issue.record("limit not clamped to one")
            return
        }
        #expect(all == [1, 2])
    }
}
