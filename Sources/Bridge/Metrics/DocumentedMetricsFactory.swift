import CoreMetrics
import Prometheus

/// A swift-metrics factory over our Prometheus registry that gives every metric its
/// `# HELP` line (the plain `PrometheusMetricsFactory` writes none, and promtool's lint
/// asks for them). Metrics not in ``help`` get none; buckets as the wrapped factory's.
package struct DocumentedMetricsFactory: MetricsFactory {
    package let base: PrometheusMetricsFactory

    package init(registry: PrometheusCollectorRegistry, durationBuckets: [String: [Duration]] = [:]) {
        var base = PrometheusMetricsFactory(registry: registry)
        base.durationHistogramBuckets = durationBuckets
        self.base = base
    }

    package var registry: PrometheusCollectorRegistry { self.base.registry }

    /// Every metric the bridge writes, with what it counts.
    package static let help: [String: String] = [
        "xmpp_bridge_messages_received_total": "Messages that arrived from a transport, before any check.",
        "xmpp_bridge_messages_dropped_total": "Messages not relayed, by reason.",
        "xmpp_bridge_messages_relayed_total": "Deliveries the target transport took, by target transport and channel.",
        "xmpp_bridge_messages_failed_total": "Deliveries that became dead letters, by target transport and channel.",
        "xmpp_bridge_receipts_total": "Receipts (XEP-0184) and displayed markers (XEP-0333) from recipients.",
        "xmpp_bridge_reconnects_total": "Times a transport came back after being unavailable.",
        "xmpp_bridge_relay_latency_seconds": "Time from a delivery's durable commit until its target took it.",
        "xmpp_bridge_http_requests_total": "HTTP ingress requests, by local and status code.",
        "xmpp_bridge_queue_depth": "Deliveries queued for a transport.",
        "xmpp_bridge_queue_oldest_age_seconds": "Age of a transport's oldest queued delivery (0 when none).",
        "xmpp_bridge_dead_letters": "Dead letters of a transport.",
        "xmpp_bridge_transport_connected": "1 when the transport can deliver now.",
        "xmpp_bridge_transport_stopped": "1 when the transport gave up until SIGHUP or reconnect.",
        "xmpp_bridge_ready": "1 when /health/ready would answer 200.",
        "xmpp_bridge_catch_ups_total": "Catch-ups from an account's message archive (XEP-0313) that got to the end.",
        "xmpp_bridge_pages_total": "Alerts a paging channel tracks until someone acks them.",
        "xmpp_bridge_paging_notices_total": "Messages a paging channel sent of its own: repeats, escalations, answers to commands.",
        "xmpp_bridge_acknowledgements_total": "Alerts acked, by channel and how (reply, reaction, displayed, command).",
        "xmpp_bridge_leases_held": "Leased transports (accounts, gateways, FIFO, socket and stdio locals) this instance runs.",
        "xmpp_bridge_leases_unowned": "Leased transports no instance runs now, as the shared state shows them.",
        "xmpp_bridge_instances_alive": "Instances sharing the state with a heartbeat within lease_ttl.",
    ]

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: Self.help[label] ?? "")
    }

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        self.registry.makeCounter(descriptor: self.descriptor(label), labels: dimensions)
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        self.registry.makeCounter(descriptor: self.descriptor(label), labels: dimensions)
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard !aggregate else { return self.base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return self.registry.makeGauge(descriptor: self.descriptor(label), labels: dimensions)
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        self.registry.makeGauge(descriptor: self.descriptor(label), labels: dimensions)
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = self.base.durationHistogramBuckets[label] ?? self.base.defaultDurationHistogramBuckets
        return self.registry.makeDurationHistogram(descriptor: self.descriptor(label), labels: dimensions, buckets: buckets)
    }

    package func destroyCounter(_ handler: any CounterHandler) { self.base.destroyCounter(handler) }
    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { self.base.destroyFloatingPointCounter(handler) }
    package func destroyRecorder(_ handler: any RecorderHandler) { self.base.destroyRecorder(handler) }
    package func destroyMeter(_ handler: any MeterHandler) { self.base.destroyMeter(handler) }
    package func destroyTimer(_ handler: any TimerHandler) { self.base.destroyTimer(handler) }
}
