import BridgeRouting
import CoreMetrics
import Foundation
import NIOConcurrencyHelpers
import TransportCore

/// The relay's counters and histograms, through swift-metrics with an injected factory
/// (the Prometheus registry in the daemon, no-op elsewhere): no global metrics system.
///
/// Names follow Prometheus conventions (`_total` counters, base units): messages in per
/// transport, relayed and failed per target transport and channel, dropped by reason,
/// relay latency (queued → the target took it), reconnects. Gauges that are a snapshot of
/// state (queue depth, oldest queued, dead letters, connection state) are set at scrape
/// time by ``MetricsServer``.
package final class RelayMetrics: Sendable {
    package let factory: any MetricsFactory
    /// Handles made once per label set: the relay path pays a dictionary lookup per
    /// message, not the registry's name and label validation.
    private let counters = NIOLockedValueBox<[[String]: Counter]>([:])
    private let latency: CoreMetrics.Timer

    package init(factory: any MetricsFactory) {
        self.factory = factory
        self.latency = CoreMetrics.Timer(label: "xmpp_bridge_relay_latency_seconds", dimensions: [], factory: factory)
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = [label] + dimensions.flatMap { [$0.0, $0.1] }
        return self.counters.withLockedValue { counters in
            if let existing = counters[key] { return existing }
            let made = Counter(label: label, dimensions: dimensions, factory: self.factory)
            counters[key] = made
            return made
        }
    }

    package static let noop = RelayMetrics(factory: NOOPMetricsHandler.instance)

    /// A message arrived from `transport` (before any check).
    package func received(from transport: String) {
        self.counter("xmpp_bridge_messages_received_total", [("transport", transport)]).increment()
    }

    /// A message was not relayed, for `reason` (a fixed label, see ``DropReason/label``).
    package func dropped(reason: String) {
        self.counter("xmpp_bridge_messages_dropped_total", [("reason", reason)]).increment()
    }

    /// Deliveries the target took, and how long each waited since it was queued.
    package func delivered(_ deliveries: [(Delivery, Date?)], now: Date) {
        var counts: [[String]: Int] = [:]
        for (delivery, queuedAt) in deliveries {
            counts[[delivery.target.transport, delivery.channel], default: 0] += 1
            if let queuedAt {
                self.latency.recordNanoseconds(Int64(max(0, now.timeIntervalSince(queuedAt)) * 1e9))
            }
        }
        for (key, count) in counts {
            self.counter("xmpp_bridge_messages_relayed_total", [("transport", key[0]), ("channel", key[1])])
                .increment(by: count)
        }
    }

    /// Deliveries that became dead letters.
    package func failed(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            self.counter("xmpp_bridge_messages_failed_total", [("transport", delivery.target.transport), ("channel", delivery.channel)]).increment()
        }
    }

    /// A transport came back after being unavailable.
    package func reconnected(_ transport: String) {
        self.counter("xmpp_bridge_reconnects_total", [("transport", transport)]).increment()
    }

    /// Receipts and displayed markers from recipients.
    package func receipt(displayed: Bool) {
        self.counter("xmpp_bridge_receipts_total", [("kind", displayed ? "displayed" : "received")]).increment()
    }

    /// A catch-up from `transport`'s message archive (XEP-0313) got to the end.
    package func caughtUp(_ transport: String) {
        self.counter("xmpp_bridge_catch_ups_total", [("transport", transport)]).increment()
    }

    /// Alerts a paging channel tracks until someone acks them.
    package func paged(channel: String, count: Int = 1) {
        self.counter("xmpp_bridge_pages_total", [("channel", channel)]).increment(by: count)
    }

    /// Messages a paging channel sent of its own: repeats, escalations, answers to commands.
    package func pagingNotices(channel: String, count: Int = 1) {
        self.counter("xmpp_bridge_paging_notices_total", [("channel", channel)]).increment(by: count)
    }

    /// An alert acked, `how`: a ``PagingPolicy/AckKind`` or ``PagingStateMachine/commandAck``.
    package func acknowledged(channel: String, how: String) {
        self.counter("xmpp_bridge_acknowledgements_total", [("channel", channel), ("how", how)]).increment()
    }

    /// The label values a configuration names.
    package struct Series: Sendable {
        /// Every transport: accounts, locals, gateways.
        package var transports: [String] = []
        /// The accounts, whose archive a catch-up reads.
        package var accounts: [String] = []
        /// (target transport, channel) of every member that may receive.
        package var deliveries: [(transport: String, channel: String)] = []
        /// The channels that page (``PagingPolicy/isPaging``).
        package var pagingChannels: [String] = []

        package init(transports: [String] = [], accounts: [String] = [], deliveries: [(transport: String, channel: String)] = [], pagingChannels: [String] = []) {
            self.transports = transports
            self.accounts = accounts
            self.deliveries = deliveries
            self.pagingChannels = pagingChannels
        }
    }

    /// Makes every counter the configuration names at 0, at start and after a reload: an
    /// `increase()` or `rate()` then sees the first event (a series that first appears at 1
    /// shows no increase, so an alert on the first dead letter would never fire), and every
    /// panel and rule in contrib/ has its series from the first scrape.
    package func prepare(_ series: Series) {
        for transport in series.transports {
            _ = self.counter("xmpp_bridge_messages_received_total", [("transport", transport)])
            _ = self.counter("xmpp_bridge_reconnects_total", [("transport", transport)])
        }
        for account in series.accounts {
            _ = self.counter("xmpp_bridge_catch_ups_total", [("transport", account)])
        }
        for (transport, channel) in series.deliveries {
            _ = self.counter("xmpp_bridge_messages_relayed_total", [("transport", transport), ("channel", channel)])
            _ = self.counter("xmpp_bridge_messages_failed_total", [("transport", transport), ("channel", channel)])
        }
        for reason in DropReason.labels {
            _ = self.counter("xmpp_bridge_messages_dropped_total", [("reason", reason)])
        }
        for displayed in [false, true] {
            _ = self.counter("xmpp_bridge_receipts_total", [("kind", displayed ? "displayed" : "received")])
        }
        for channel in series.pagingChannels {
            _ = self.counter("xmpp_bridge_pages_total", [("channel", channel)])
            _ = self.counter("xmpp_bridge_paging_notices_total", [("channel", channel)])
            for how in PagingPolicy.AckKind.allCases.map(\.rawValue) + [PagingStateMachine.commandAck] {
                _ = self.counter("xmpp_bridge_acknowledgements_total", [("channel", channel), ("how", how)])
            }
        }
    }
}
