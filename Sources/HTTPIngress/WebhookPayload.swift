import Foundation
import TransportCore

/// An Alertmanager webhook (prometheus.io, `webhook_config`: version 4, `status`,
/// `alerts[]` with `labels`, `annotations`, `startsAt`, `generatorURL`, and the group's
/// `commonLabels`, `externalURL`…) or Grafana's (the same shape, plus `title`, `message`,
/// and per alert `dashboardURL`, `panelURL`, `valueString`), as a template context.
///
/// The context holds every field of the payload as sent, and for convenience: `firing`
/// and `resolved` (the alerts in each state), `hasFiring`, `hasResolved`, `firingCount`,
/// `resolvedCount`, `multiple` (more than one alert), `link` (the group's `externalURL`),
/// and on each alert (in `alerts`, `firing` and `resolved`) `name` (its `alertname`
/// label), `summary` (the `summary`, else `description`, else `message` annotation),
/// `labelText` (`key=value, …` without `alertname`) and `url` (`panelURL`, else
/// `dashboardURL`, else `generatorURL`).
public struct WebhookPayload: @unchecked Sendable {
    /// Why a body is not such a payload.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// Not JSON at all.
        case malformed(String)
        /// JSON, but not a webhook of this kind.
        case unexpected(String)

        public var description: String {
            switch self {
            case .malformed(let reason): "bad JSON: \(reason)"
            case .unexpected(let reason): reason
            }
        }
    }

    /// Plain Swift values (`[String: Any]`, `[Any]`, `String`, `Int`, `Double`, `Bool`):
    /// immutable once built, which is why sharing it is safe.
    public let context: [String: Any]
    public let alertCount: Int

    public init(json: [UInt8]) throws(Problem) {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(json))
        } catch DecodingError.dataCorrupted(let context) {
            throw .malformed(context.underlyingError.map { "\($0)" } ?? context.debugDescription)
        } catch {
            throw .malformed("\(error)")
        }
        guard var context = value.plain as? [String: Any] else {
            throw .unexpected("the body is not a JSON object")
        }
        guard let alerts = context["alerts"] as? [Any] else {
            throw .unexpected("no \"alerts\" array: not an Alertmanager or Grafana webhook")
        }
        var firing: [[String: Any]] = []
        var resolved: [[String: Any]] = []
        var enriched: [[String: Any]] = []
        for case var alert as [String: Any] in alerts {
            let labels = alert["labels"] as? [String: Any] ?? [:]
            let annotations = alert["annotations"] as? [String: Any] ?? [:]
            alert["name"] = labels["alertname"] as? String ?? "alert"
            if let summary = ["summary", "description", "message"].lazy.compactMap({ annotations[$0] as? String }).first(where: { !$0.isEmpty }) {
                alert["summary"] = summary
            }
            let shown = labels.filter { $0.key != "alertname" }.sorted { $0.key < $1.key }
            if !shown.isEmpty {
                alert["labelText"] = shown.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            }
            if let url = ["panelURL", "dashboardURL", "generatorURL"].lazy.compactMap({ alert[$0] as? String }).first(where: { !$0.isEmpty }) {
                alert["url"] = url
            }
            enriched.append(alert)
            if (alert["status"] as? String)?.lowercased() == "resolved" {
                resolved.append(alert)
            } else {
                firing.append(alert)
            }
        }
        guard !firing.isEmpty || !resolved.isEmpty else {
            throw .unexpected("\"alerts\" holds no alert objects")
        }
        context["alerts"] = enriched
        context["firing"] = firing
        context["resolved"] = resolved
        context["hasFiring"] = !firing.isEmpty
        context["hasResolved"] = !resolved.isEmpty
        context["firingCount"] = firing.count
        context["resolvedCount"] = resolved.count
        context["multiple"] = firing.count + resolved.count > 1
        if let link = context["externalURL"] as? String, !link.isEmpty { context["link"] = link }
        self.context = context
        self.alertCount = firing.count + resolved.count
    }

    /// What the payload says about its alerts, for de-duplication, threading and silences;
    /// nil when it names no group (no `groupKey` and, for Grafana, no rule uid).
    public func notification(kind: IngressRoute.WebhookKind) -> AlertNotification? {
        let alerts = self.context["alerts"] as? [[String: Any]] ?? []
        let status = (self.context["status"] as? String) ?? (alerts.contains { ($0["status"] as? String)?.lowercased() != "resolved" } ? "firing" : "resolved")
        var identities: [String] = []
        var ruleUIDs: Set<String> = []
        for alert in alerts {
            let labels = alert["labels"] as? [String: Any] ?? [:]
            let fingerprint = alert["fingerprint"] as? String
            if kind == .grafana, let uid = Self.grafanaRuleUID(alert, labels: labels) {
                ruleUIDs.insert(uid)
                identities.append([uid, fingerprint].compactMap { $0 }.joined(separator: "/"))
            } else if let fingerprint, !fingerprint.isEmpty {
                identities.append(fingerprint)
            } else {
                identities.append(labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
            }
        }
        let groupKey = (self.context["groupKey"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        // Grafana groups by its rule uids (its groupKey is often the same `{}:{}` for all).
        let rules = ruleUIDs.isEmpty ? nil : ruleUIDs.sorted().joined(separator: ",")
        guard let group = kind == .grafana ? rules ?? groupKey : groupKey else { return nil }
        var common: [String: String] = [:]
        for (key, value) in self.context["commonLabels"] as? [String: Any] ?? [:] {
            if let text = value as? String { common[key] = text }
        }
        let severities = Set(alerts.compactMap { ($0["labels"] as? [String: Any])?["severity"] as? String })
        return AlertNotification(
            kind: kind.rawValue, group: group, status: status, alerts: identities, commonLabels: common,
            severity: common["severity"] ?? (severities.count == 1 ? severities.first : nil)
        )
    }

    /// A Grafana alert's rule uid: the `__alert_rule_uid__` label, else the uid in its
    /// `generatorURL` (`…/alerting/grafana/{uid}/view`, or `…/alerting/{uid}/edit` before Grafana 9).
    static func grafanaRuleUID(_ alert: [String: Any], labels: [String: Any]) -> String? {
        if let uid = labels["__alert_rule_uid__"] as? String, !uid.isEmpty { return uid }
        guard let url = alert["generatorURL"] as? String, let range = url.range(of: "/alerting/") else { return nil }
        var rest = url[range.upperBound...]
        if rest.hasPrefix("grafana/") { rest = rest.dropFirst("grafana/".count) }
        let uid = rest.prefix { $0 != "/" && $0 != "?" }
        return uid.isEmpty ? nil : String(uid)
    }

    /// Any JSON value, decoded without Foundation's object graph (whose numbers and
    /// booleans differ between platforms).
    enum JSONValue: Decodable {
        case null
        case bool(Bool)
        case integer(Int)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? container.decode(Int.self) {
                self = .integer(integer)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let string = try? container.decode(String.self) {
                self = .string(string)
            } else if let array = try? container.decode([JSONValue].self) {
                self = .array(array)
            } else {
                self = .object(try container.decode([String: JSONValue].self))
            }
        }

        /// As plain Swift values for the template; null becomes absent.
        var plain: Any? {
            switch self {
            case .null: nil
            case .bool(let value): value
            case .integer(let value): value
            case .number(let value): value
            case .string(let value): value
            case .array(let values): values.compactMap(\.plain)
            case .object(let fields): fields.compactMapValues(\.plain)
            }
        }
    }
}
