import Foundation
import TransportCore

/// How a channel pages (issue 24): what acks an alert, when an unacked
/// urgent one is sent again or escalated, where silences go, and how long a repeated
/// monitoring notification counts as the same one. From `[channels.NAME]`.
package struct PagingPolicy: Hashable, Sendable {
    /// What a recipient does that counts as taking an alert.
    package enum AckKind: String, Hashable, Sendable, CaseIterable {
        /// A reply to the alert (XEP-0461), or "ack" as the next message.
        case reply
        /// A reaction to it (XEP-0444).
        case reaction
        /// A displayed marker for it (XEP-0333); off by default: a phone may mark a
        /// message displayed that nobody read.
        case displayed
    }

    /// The next people to page when nobody acked for `after` since the previous tier was paged.
    package struct Tier: Hashable, Sendable {
        package var after: Duration
        package var to: [Endpoint]

        package init(after: Duration, to: [Endpoint]) {
            self.after = after
            self.to = to
        }
    }

    /// Any paging key set: the channel's alerts are tracked, and its recipients' replies,
    /// reactions and words are read as acks and commands, not relayed.
    package init() {}

    package var isPaging = false
    /// Alertmanager's base URL, for `silence` and `unsilence` (API v2).
    package var alertmanagerURL: String?
    package var ackKinds: Set<AckKind> = [.reply, .reaction]
    /// Resend an unacked alert to the current tier this often (nil: never).
    package var repeatInterval: Duration?
    package var tiers: [Tier] = []
    /// Repeats and escalations are for alerts at least this urgent.
    package var escalationMinimumPriority = 4
    /// The same notification again within this window is not relayed again.
    package var dedupeWindow: Duration = .seconds(300)
    /// At most this many messages a minute to each target; the rest are gathered into a
    /// digest (nil: no limit). Priority 5 passes always.
    package var maxPerMinute: Int?
    /// Members' quiet hours, by endpoint (normalized).
    package var quiet: [Endpoint: QuietHours] = [:]
    /// A monitoring alert's `severity` label → priority.
    package var severityPriority: [String: Int] = Self.defaultSeverityPriority

    package static let defaultSeverityPriority = ["critical": 5, "warning": 3, "info": 2]
    package static let defaultPriority = 3

    /// The priority of `message`: its own, else its alerts' severity, else 3.
    package func priority(of message: InboundMessage) -> Int {
        if let priority = message.priority { return priority }
        if let severity = message.notification?.severity?.lowercased(), let mapped = self.severityPriority[severity] { return mapped }
        return Self.defaultPriority
    }

    /// Whether an alert at `priority` is repeated and escalated.
    package func escalates(priority: Int) -> Bool {
        priority >= self.escalationMinimumPriority && (self.repeatInterval != nil || !self.tiers.isEmpty)
    }
}
