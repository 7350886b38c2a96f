import Bridge
import BridgeRelay
import BridgeRouting
import Prometheus
import Testing
import TransportCore

/// The relay's metrics as Prometheus reads them: the series a configuration names exist at
/// 0 from the start (so `increase()` sees the first event), each with its HELP line.
@Suite("Relay metrics")
struct RelayMetricsTests {
    static func emitted(_ registry: PrometheusCollectorRegistry) -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test("prepare makes every named counter at 0; events count on from there")
    func prepared() {
        let registry = PrometheusCollectorRegistry()
        let metrics = RelayMetrics(factory: DocumentedMetricsFactory(registry: registry))
        metrics.prepare(
            RelayMetrics.Series(
                transports: ["work", "alerts"], accounts: ["work"], deliveries: [(transport: "work", channel: "oncall")], pagingChannels: ["oncall"]
            )
        )
        var text = Self.emitted(registry)
        for line in [
            #"xmpp_bridge_messages_received_total{transport="alerts"} 0"#,
            #"xmpp_bridge_reconnects_total{transport="work"} 0"#,
            #"xmpp_bridge_catch_ups_total{transport="work"} 0"#,
            #"xmpp_bridge_messages_relayed_total{transport="work",channel="oncall"} 0"#,
            #"xmpp_bridge_messages_failed_total{transport="work",channel="oncall"} 0"#,
            #"xmpp_bridge_messages_dropped_total{reason="filtered"} 0"#,
            #"xmpp_bridge_receipts_total{kind="displayed"} 0"#,
            #"xmpp_bridge_pages_total{channel="oncall"} 0"#,
            #"xmpp_bridge_paging_notices_total{channel="oncall"} 0"#,
            #"xmpp_bridge_acknowledgements_total{channel="oncall",how="reaction"} 0"#,
        ] {
            #expect(text.contains(line), "missing \(line)")
        }
        #expect(!text.contains(#"xmpp_bridge_catch_ups_total{transport="alerts"}"#), "a local reads no archive")
        metrics.caughtUp("work")
        metrics.paged(channel: "oncall", count: 2)
        metrics.pagingNotices(channel: "oncall")
        metrics.acknowledged(channel: "oncall", how: "reply")
        metrics.prepare(RelayMetrics.Series(transports: ["work"], accounts: ["work"], pagingChannels: ["oncall"]))
        text = Self.emitted(registry)
        #expect(text.contains(#"xmpp_bridge_catch_ups_total{transport="work"} 1"#), "a second prepare (a reload) keeps the counts")
        #expect(text.contains(#"xmpp_bridge_pages_total{channel="oncall"} 2"#))
        #expect(text.contains(#"xmpp_bridge_paging_notices_total{channel="oncall"} 1"#))
        #expect(text.contains(#"xmpp_bridge_acknowledgements_total{channel="oncall",how="reply"} 1"#))
        // Every metric written has its HELP text.
        // (A histogram's series carry _bucket, _sum and _count after its name.)
        let names = Set(
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
                line.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map { String($0).replacing(/_(bucket|sum|count)$/, with: "") }
            }
        )
        for name in names {
            #expect(!(DocumentedMetricsFactory.help[name] ?? "").isEmpty, "no HELP for \(name)")
        }
    }

    @Test("DropReason.labels holds the label of every reason")
    func dropLabels() {
        let reasons: [DropReason] = [
            .noBody, .alreadyRelayed(by: "b"), .fromOwnAccount, .notAMember, .notAMemberOf(channel: "c"), .noReceivers, .encrypted("x"),
            .unknownReference, .noAddressee, .alreadyHandled, .echo, .stateError, .transportReplaced, .filtered, .notificationPending,
        ]
        #expect(Set(reasons.map(\.label)) == Set(DropReason.labels))
        #expect(DropReason.labels.count == Set(DropReason.labels).count)
    }
}
