import Testing
import TestSupport

@testable import XMPP

/// When our `<r/>` goes (XEP-0198 §4): with a lone message, once per delay of a trickle
/// riding a message's write, and whenever the stanza or sender limits are reached.
@Suite("acknowledgement request pacer")
struct AcknowledgementRequestPacerTests {
    typealias Instant = ManualClock.Instant

    static func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    /// Whether a batch written then carries a request (a mutating call, out of `#expect`).
    func ask(_ pacer: inout AcknowledgementRequestPacer<Instant>, unacknowledged: Int, waiting: Int, now: Instant) -> Bool {
        pacer.batchWritten(unacknowledged: unacknowledged, waiting: waiting, now: now)
    }

    @Test("a lone message asks at once; a trickle every 10 ms asks once per 100 ms, with a message")
    func trickle() {
        var pacer = AcknowledgementRequestPacer<Instant>(delay: .milliseconds(100), stanzas: 64, waiters: 16)
        var asked: [Int] = []
        for tick in 0..<30 where pacer.batchWritten(unacknowledged: 1, waiting: 1, now: Self.at(tick * 10)) {
            asked.append(tick * 10)
        }
        #expect(asked == [0, 100, 200])
    }

    @Test("a request sent on its own (the timer, a caller waiting) starts the delay again")
    func requestedOnItsOwn() {
        var pacer = AcknowledgementRequestPacer<Instant>(delay: .milliseconds(100), stanzas: 64, waiters: 16)
        #expect(ask(&pacer, unacknowledged: 1, waiting: 1, now: Self.at(0)))
        pacer.requested(at: Self.at(150))
        #expect(!ask(&pacer, unacknowledged: 1, waiting: 1, now: Self.at(200)))
        #expect(ask(&pacer, unacknowledged: 1, waiting: 1, now: Self.at(250)))
        #expect(pacer.lastRequest == Self.at(250))
    }

    @Test("enough stanzas or senders waiting ask at once, whatever the delay")
    func limits() {
        var pacer = AcknowledgementRequestPacer<Instant>(delay: .seconds(10), stanzas: 64, waiters: 4)
        #expect(ask(&pacer, unacknowledged: 1, waiting: 1, now: Self.at(0)))
        #expect(!ask(&pacer, unacknowledged: 63, waiting: 3, now: Self.at(1)))
        #expect(ask(&pacer, unacknowledged: 64, waiting: 1, now: Self.at(2)))
        #expect(ask(&pacer, unacknowledged: 2, waiting: 4, now: Self.at(3)))
        #expect(!ask(&pacer, unacknowledged: 2, waiting: 3, now: Self.at(4)))
    }

    @Test("without a delay every batch asks")
    func noDelay() {
        var pacer = AcknowledgementRequestPacer<Instant>(delay: .zero, stanzas: 64, waiters: 16)
        var asked = 0
        for _ in 0..<5 where pacer.batchWritten(unacknowledged: 1, waiting: 1, now: Self.at(0)) { asked += 1 }
        #expect(asked == 5)
    }
}
