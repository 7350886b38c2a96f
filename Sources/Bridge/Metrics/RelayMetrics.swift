import CoreMetrics
import Foundation
import Transports

/// The relay's counters and histograms, through swift-metrics with an injected factory
/// (the Prometheus registry in the daemon, no-op elsewhere): no global metrics system.
///
/// Names follow Prometheus conventions (`_total` counters, base units): messages in per
/// transport, relayed and failed per target transport and channel, dropped by reason,
/// relay latency (queued → the target took it), reconnects. Gauges that are a snapshot of
/// state (queue depth, oldest queued, dead letters, connection state) are set at scrape
/// time by ``MetricsServer``.
final class RelayMetrics: Sendable {
    let factory: any MetricsFactory

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    static let noop = RelayMetrics(factory: NOOPMetricsHandler.instance)

    /// A message arrived from `transport` (before any check).
    func received(from transport: String) {
        Counter(label: "xmpp_bridge_messages_received_total", dimensions: [("transport", transport)], factory: self.factory).increment()
    }

    /// A message was not relayed, for `reason` (a fixed label, see ``DropReason/label``).
    func dropped(reason: String) {
        Counter(label: "xmpp_bridge_messages_dropped_total", dimensions: [("reason", reason)], factory: self.factory).increment()
    }

    /// Deliveries the target took, and how long each waited since it was queued.
    func delivered(_ deliveries: [(Delivery, Date?)], now: Date) {
        var counts: [[String]: Int] = [:]
        for (delivery, queuedAt) in deliveries {
            counts[[delivery.target.transport, delivery.channel], default: 0] += 1
            if let queuedAt {
                Timer(label: "xmpp_bridge_relay_latency_seconds", dimensions: [], factory: self.factory)
                    .recordNanoseconds(Int64(max(0, now.timeIntervalSince(queuedAt)) * 1e9))
            }
        }
        for (key, count) in counts {
            Counter(label: "xmpp_bridge_messages_relayed_total", dimensions: [("transport", key[0]), ("channel", key[1])], factory: self.factory)
                .increment(by: count)
        }
    }

    /// Deliveries that became dead letters.
    func failed(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            Counter(
                label: "xmpp_bridge_messages_failed_total", dimensions: [("transport", delivery.target.transport), ("channel", delivery.channel)],
                factory: self.factory
            ).increment()
        }
    }

    /// A transport came back after being unavailable.
    func reconnected(_ transport: String) {
        Counter(label: "xmpp_bridge_reconnects_total", dimensions: [("transport", transport)], factory: self.factory).increment()
    }

    /// Receipts and displayed markers from recipients.
    func receipt(displayed: Bool) {
        Counter(label: "xmpp_bridge_receipts_total", dimensions: [("kind", displayed ? "displayed" : "received")], factory: self.factory).increment()
    }
}
