import BridgeState
import Logging
import TransportCore

/// The relay path's splitting stage (issue 40): a delivery over its XMPP target's stanza
/// limit becomes parts (``DeliverySplitter``); others go as they are.
package struct SplitStage: RelayStage, Sendable {
    /// Each XMPP account's stanza limit (bytes), by transport name.
    package var limits: [String: Int] = [:]
    private let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// `routed`, split to fit, becomes `deliveries`.
    package mutating func run(_ work: inout RelayWork) -> StageOutcome {
        work.deliveries = self.split(work.routed)
        return .next
    }

    /// `deliveries`, each over its target's limit split into parts, in order.
    package func split(_ deliveries: [Delivery]) -> [Delivery] {
        var result: [Delivery] = []
        result.reserveCapacity(deliveries.count)
        for delivery in deliveries {
            guard let limit = self.limits[delivery.target.transport] else {
                result.append(delivery)
                continue
            }
            let parts = DeliverySplitter.split(delivery, maxStanzaBytes: limit)
            if parts.count > 1 {
                self.logger.info("delivery split to fit the stanza limit", metadata: ["target": "\(delivery.target)", "parts": "\(parts.count)", "limit": "\(limit)"])
            }
            result += parts
        }
        return result
    }
}
