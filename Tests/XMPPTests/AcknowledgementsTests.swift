import Foundation
import TestSupport
import Testing

@testable import XMPP

/// The senders waiting on the server's acknowledgements (issue 40: a part of its own).
@Suite("Acknowledgements")
struct AcknowledgementsTests {
    @Test("a count releases the waiters it covers, in order, modulo 2³²; the rest keep waiting")
    func coveredWrapsAround() {
        var acknowledgements = Acknowledgements<ManualClock.Instant>(timeout: .seconds(30))
        let numbers: [UInt32] = [UInt32.max - 1, UInt32.max, 0, 1, 5]
        let waiters = numbers.map { _ in OneShotWaiter<Void>() }
        for (number, waiter) in zip(numbers, waiters) { acknowledgements.wait(AcknowledgementWaiter(number: number, waiter: waiter, sentAt: nil, count: 0)) }
        let first = acknowledgements.covered(through: 0)
        #expect(first.map(\.number) == [UInt32.max - 1, UInt32.max, 0], "2³² − 2 and 2³² − 1 come before 0")
        #expect(zip(first, waiters).allSatisfy { $0.waiter === $1 })
        #expect(acknowledgements.count == 2)
        let none = acknowledgements.covered(through: 0)
        #expect(none.isEmpty, "each waiter is released once")
        let rest = acknowledgements.takeAll()
        #expect(rest.map(\.number) == [1, 5] && acknowledgements.isEmpty)
    }
}
