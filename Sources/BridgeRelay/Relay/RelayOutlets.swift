import Foundation
import NIOConcurrencyHelpers
import TransportCore

/// Whom the pipeline tells what happened (issue 40): the observers' mailboxes (presence
/// relay, roster mirrors), the metrics, the `?wait=sent` waiters (`settled`), the
/// dead-letter counts for `status`, and the input that asked to finish once everything is
/// delivered. Fixed at construction but the observers, added before the bridge starts.
package struct RelayOutlets: Sendable {
    package typealias Settled = @Sendable (_ delivered: [(Delivery, Date?)], _ failed: [(Delivery, String)]) -> Void

    package let metrics: RelayMetrics
    /// Told when deliveries leave a queue (delivered or dead).
    package let settled: Settled
    /// Dead letters per target transport.
    package let deadLetters = NIOLockedValueBox<[String: Int]>([:])
    /// Called once everything is delivered after an input asked to finish (stdin ended).
    package let finish: @Sendable () async -> Void
    private let mailboxes = NIOLockedValueBox<[ObserverMailbox]>([])

    package init(metrics: RelayMetrics, settled: @escaping Settled, finish: @escaping @Sendable () async -> Void) {
        self.metrics = metrics
        self.settled = settled
        self.finish = finish
    }

    /// Adds an observer's mailbox.
    package func observe(with observer: any TransportEventHandler) {
        self.mailboxes.withLockedValue { $0.append(ObserverMailbox(observer)) }
    }

    /// Posts `event` to every observer; never waits for one.
    package func notify(_ event: TransportEvent, from transport: String) {
        for mailbox in self.mailboxes.withLockedValue({ $0 }) { mailbox.post(event, from: transport) }
    }
}
