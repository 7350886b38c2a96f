import Foundation
import TransportCore

/// What the pipeline knows of each target transport (issue 40): its running worker, one
/// being removed, the incarnation whose events count, deliveries parked while none runs,
/// and what it last reported. Held and changed by the pipeline only.
package struct TargetTable<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    package typealias Worker = DeliveryWorker<C>

    package var workers: [String: Worker] = [:]
    /// Workers being removed, until what they held is parked (the pipeline's
    /// ``RelayPipeline/queued(among:)`` looks here too).
    package var draining: [String: Worker] = [:]
    /// The current instance of each transport; events from others are stale.
    package var instances: [String: UInt64] = [:]
    /// Deliveries for transports that are not running (loaded at start, or left by a
    /// removed transport); a worker added for that name takes them.
    package var parked: [String: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]] = [:]
    /// What each transport last reported, for `xmpp-bridge status`.
    package var availability: [String: (available: Bool, reason: String?, stopped: Bool)] = [:]

    package init() {}
}
