import Foundation
import TransportCore

/// One alert a paging channel relayed (issue 24), as stored: who it went to under which
/// copy ids, how far it escalated, who acked it. Persisted as JSON in the `pages`
/// table, so repeats and escalations survive restarts.
package struct Page: Hashable, Sendable, Codable {
    /// The alert's source and its id there (the HTTP ingress's message id).
    package var source: Endpoint
    package var id: String
    package var channel: String
    package var priority: Int
    /// The text as the recipients first got it, for repeats and escalations.
    package var text: String
    package var createdAt: Date
    /// Everyone paged so far, in order, each once.
    package var recipients: [Endpoint]
    /// The tier paged now: the channel's members first, then each escalation's; repeats go to them.
    package var current: [Endpoint] = []
    /// Every copy sent (first, repeated, escalated, notices): relay id → its recipient.
    package var copies: [String: Endpoint]
    /// 0 while the channel's members are paged; n once `escalate[n-1]` was.
    package var tier: Int = 0
    /// When the current tier was paged, and when it was last sent to.
    package var tierSince: Date
    package var lastSent: Date
    package var ack: AlertAck?
    package var escalations: [MessageDeliveryStatus.Escalation] = []
    /// The alert group's thread (``AlertNotification/threadKey``), and its common labels.
    package var thread: String?
    package var commonLabels: [String: String] = [:]
    package var resolved: Bool = false
    /// Silences made from the chat for this alert (Alertmanager ids): `unsilence` takes only these.
    package var silences: [String] = []

    package var key: PageKey { PageKey(source: self.source.transport, id: self.id) }

    /// The copy `recipient` got first: what a reply threads under.
    package func firstCopy(to recipient: Endpoint) -> String? {
        self.copies.filter { $0.value == recipient }.keys.min { lhs, rhs in
            (self.copyOrder[lhs] ?? 0) < (self.copyOrder[rhs] ?? 0)
        }
    }

    /// The order copies were made in (relay ids carry no order of their own).
    package var copyOrder: [String: Int] = [:]

    /// Whether the page still wants someone to act.
    package var isOpen: Bool { self.ack == nil && !self.resolved }

    /// Records a copy sent to `recipient` under `relayID`.
    package mutating func add(copy relayID: String, to recipient: Endpoint) {
        self.copyOrder[relayID] = self.copies.count
        self.copies[relayID] = recipient
        if !self.recipients.contains(recipient) { self.recipients.append(recipient) }
    }

    package init(source: Endpoint, id: String, channel: String, priority: Int, text: String, createdAt: Date, recipients: [Endpoint], current: [Endpoint] = [], copies: [String: Endpoint], tier: Int = 0, tierSince: Date, lastSent: Date, ack: AlertAck? = nil, escalations: [MessageDeliveryStatus.Escalation] = [], thread: String? = nil, commonLabels: [String: String] = [:], resolved: Bool = false, silences: [String] = [], copyOrder: [String: Int] = [:]) {
        self.source = source
        self.id = id
        self.channel = channel
        self.priority = priority
        self.text = text
        self.createdAt = createdAt
        self.recipients = recipients
        self.current = current
        self.copies = copies
        self.tier = tier
        self.tierSince = tierSince
        self.lastSent = lastSent
        self.ack = ack
        self.escalations = escalations
        self.thread = thread
        self.commonLabels = commonLabels
        self.resolved = resolved
        self.silences = silences
        self.copyOrder = copyOrder
    }
}

/// A page's identity: its source transport and its id there.
package struct PageKey: Hashable, Sendable, CustomStringConvertible {
    package var source: String
    package var id: String

    package var description: String { "\(self.source)/\(self.id)" }

    package init(source: String, id: String) {
        self.source = source
        self.id = id
    }
}
