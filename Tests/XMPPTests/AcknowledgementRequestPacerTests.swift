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
}
