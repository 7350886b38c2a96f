import BridgeState
import Foundation
import TransportCore

/// One queued delivery or dead letter as the pipeline describes it to operators
/// (`xmpp-bridge queue list`).
package struct QueueItemSummary: Sendable, Equatable {
    package enum State: String, Sendable {
        case queued
        case dead
    }

    package var delivery: Delivery
    package var state: State
    package var attempts: Int
    package var enqueuedAt: Date
    /// The last error of a queued delivery, the reason of a dead one.
    package var reason: String?

    package init(delivery: Delivery, state: State, attempts: Int, enqueuedAt: Date, reason: String? = nil) {
        self.delivery = delivery
        self.state = state
        self.attempts = attempts
        self.enqueuedAt = enqueuedAt
        self.reason = reason
    }

    package init(_ letter: DeadLetterRecord) {
        self.init(delivery: letter.delivery, state: .dead, attempts: letter.attempts, enqueuedAt: letter.enqueuedAt, reason: letter.reason)
    }

    package init(_ record: QueuedDeliveryRecord) {
        var delivery = record.delivery
        delivery.sequence = record.sequence ?? 0
        self.init(delivery: delivery, state: .queued, attempts: record.attempts, enqueuedAt: record.enqueuedAt, reason: record.lastError)
    }
}
