import Foundation
import NIOConcurrencyHelpers
import TransportCore

/// Bounced deliveries and the end of input: the pipeline's rarer paths.
extension RelayPipeline {
    package func bounced(relayID: String, reason: String, permanent: Bool, from transport: String) {
        guard let worker = self.targetTable.workers[transport], let sequence = self.journal.assignSequences(1)?.lowerBound,
            let outcome = worker.bounced(relayID: relayID, permanent: permanent, reason: reason, sequence: sequence)
        else {
            self.logger.debug("error reply for no delivery we remember", metadata: ["transport": "\(transport)", "id": "\(relayID)", "reason": "\(reason)"])
            return
        }
        for case .enqueue(let delivery, _, _) in outcome.entries { self.shared?.known[transport, default: []].insert(delivery.sequence) }
        self.journal.record(outcome.entries)
        if outcome.retried > 0 {
            self.logger.notice("delivery bounced; retrying", metadata: ["transport": "\(transport)", "id": "\(relayID)", "reason": "\(reason)"])
        }
    }

    /// After an input finished: stop once every running queue is empty, or after
    /// `drainTimeout`; what is still queued then stays in the journal for the next run.
    package func finishWhenDrained(drainTimeout: Duration = .seconds(30)) async {
        let workers = Array(self.targetTable.workers.values)
        let clock = self.clock
        let drained = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answered = NIOLockedValueBox(false)
            let answer: @Sendable (Bool) -> Void = { value in
                if answered.withLockedValue({ done in defer { done = true }; return !done }) { continuation.resume(returning: value) }
            }
            // Whichever comes first; the loser finds the continuation answered.
            Task {
                for worker in workers { await worker.waitUntilEmpty() }
                answer(true)
            }
            Task {
                _ = try? await clock.sleep(until: clock.now.advanced(by: drainTimeout), tolerance: nil)
                answer(false)
            }
        }
        await self.journal.flushed()
        if drained {
            self.logger.info("input finished and everything delivered; stopping")
        } else {
            let pending = self.targetTable.workers.values.reduce(0) { $0 + $1.count }
            self.logger.warning("input finished; \(pending) deliveries still queued for the next run")
        }
        await self.outlets.finish()
    }
}
