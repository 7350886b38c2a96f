import Testing

@testable import XMPP

/// When our `<r/>` rides a batch (XEP-0198 §4): at the stanza or sender limit, or always
/// without a delay; otherwise the session's timer asks later.
@Suite("acknowledgement request pacer")
struct AcknowledgementRequestPacerTests {
    @Test("below both limits a batch carries no request; at either limit it does")
    func limits() {
        let pacer = AcknowledgementRequestPacer(delay: .milliseconds(50), stanzas: 64, waiters: 4)
        #expect(!pacer.batchCarriesRequest(unacknowledged: 1, waiting: 1))
        #expect(!pacer.batchCarriesRequest(unacknowledged: 63, waiting: 3))
        #expect(pacer.batchCarriesRequest(unacknowledged: 64, waiting: 1))
        #expect(pacer.batchCarriesRequest(unacknowledged: 2, waiting: 4))
    }

    @Test("without a delay every batch asks")
    func noDelay() {
        let pacer = AcknowledgementRequestPacer(delay: .zero, stanzas: 64, waiters: 16)
        #expect(pacer.batchCarriesRequest(unacknowledged: 1, waiting: 1))
    }

    @Test("the timer waits the delay, or the steady delay while batches carried requests within it")
    func timerDelay() {
        let pacer = AcknowledgementRequestPacer(delay: .milliseconds(50), stanzas: 64, waiters: 4, steadyDelay: .seconds(1))
        #expect(pacer.timerDelay(sinceCarriedRequest: nil) == .milliseconds(50))
        #expect(pacer.timerDelay(sinceCarriedRequest: .milliseconds(30)) == .seconds(1))
        #expect(pacer.timerDelay(sinceCarriedRequest: .milliseconds(999)) == .seconds(1))
        #expect(pacer.timerDelay(sinceCarriedRequest: .seconds(1)) == .milliseconds(50))
        #expect(pacer.timerDelay(sinceCarriedRequest: .seconds(90)) == .milliseconds(50))
    }

    @Test("a steady delay not above the delay changes nothing")
    func steadyDelayOff() {
        for steady in [Duration.zero, .milliseconds(50), .milliseconds(10)] {
            let pacer = AcknowledgementRequestPacer(delay: .milliseconds(50), stanzas: 64, waiters: 4, steadyDelay: steady)
            #expect(pacer.timerDelay(sinceCarriedRequest: .milliseconds(1)) == .milliseconds(50))
        }
    }
}
