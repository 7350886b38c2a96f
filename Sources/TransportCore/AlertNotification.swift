/// What a monitoring system's notification says about the alerts it carries, beyond its
/// text (Alertmanager's webhook `groupKey`, `status`, alert `fingerprint`s and
/// `commonLabels`; Grafana's rule uid): the bridge uses it to recognise the same
/// notification sent twice (an Alertmanager HA pair whose gossip failed), to thread a
/// group's RESOLVED notification under its FIRING one, and for the matchers of a silence
/// asked for from the chat (Alertmanager API v2).
public struct AlertNotification: Hashable, Sendable, Codable {
    /// Which sender: "alertmanager" or "grafana".
    public var kind: String
    /// The alert group: Alertmanager's `groupKey`, Grafana's rule uids joined (sorted).
    public var group: String
    /// `firing` or `resolved`, as the sender says.
    public var status: String
    /// The alerts' identities in the group, sorted: Alertmanager's fingerprints, Grafana's
    /// rule uids with their labels' fingerprint when it sends one.
    public var alerts: [String]
    /// The labels every alert of the group shares (`commonLabels`): a silence's matchers.
    public var commonLabels: [String: String]
    /// The `severity` label, when every alert has the same one.
    public var severity: String?

    public init(kind: String, group: String, status: String, alerts: [String], commonLabels: [String: String], severity: String? = nil) {
        self.kind = kind
        self.group = group
        self.status = status
        self.alerts = alerts.sorted()
        self.commonLabels = commonLabels
        self.severity = severity
    }

    /// Whether the whole group is resolved.
    public var isResolved: Bool { self.status.lowercased() == "resolved" }

    /// The same notification from another replica has the same key: sender, group,
    /// status and alerts (fingerprints), not the text (replicas may render times apart).
    public var deduplicationKey: String {
        ([self.kind, self.group, self.status.lowercased()] + self.alerts).joined(separator: "\u{1F}")
    }

    /// The key of the group's thread: its FIRING and RESOLVED notifications share it.
    public var threadKey: String { "\(self.kind)\u{1F}\(self.group)" }
}
