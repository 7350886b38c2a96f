import Foundation
import TransportCore

/// One alert a paging channel relayed (issue 24), as stored: who it went to under which
/// copy ids, how far it escalated, who acked it. Persisted as JSON in the `pages`
/// table, so repeats and escalations survive restarts.
struct Page: Hashable, Sendable, Codable {
    /// The alert's source and its id there (the HTTP ingress's message id).
    var source: Endpoint
    var id: String
    var channel: String
    var priority: Int
    /// The text as the recipients first got it, for repeats and escalations.
    var text: String
    var createdAt: Date
    /// Everyone paged so far, in order, each once.
    var recipients: [Endpoint]
    /// The tier paged now: the channel's members first, then each escalation's; repeats go to them.
    var current: [Endpoint] = []
    /// Every copy sent (first, repeated, escalated, notices): relay id → its recipient.
    var copies: [String: Endpoint]
    /// 0 while the channel's members are paged; n once `escalate[n-1]` was.
    var tier: Int = 0
    /// When the current tier was paged, and when it was last sent to.
    var tierSince: Date
    var lastSent: Date
    var ack: AlertAck?
    var escalations: [MessageDeliveryStatus.Escalation] = []
    /// The alert group's thread (``AlertNotification/threadKey``), and its common labels.
    var thread: String?
    var commonLabels: [String: String] = [:]
    var resolved = false
    /// Silences made from the chat for this alert (Alertmanager ids): `unsilence` takes only these.
    var silences: [String] = []

    var key: PageKey { PageKey(source: self.source.transport, id: self.id) }

    /// The copy `recipient` got first: what a reply threads under.
    func firstCopy(to recipient: Endpoint) -> String? {
        self.copies.filter { $0.value == recipient }.keys.min { lhs, rhs in
            (self.copyOrder[lhs] ?? 0) < (self.copyOrder[rhs] ?? 0)
        }
    }

    /// The order copies were made in (relay ids carry no order of their own).
    var copyOrder: [String: Int] = [:]

    /// Whether the page still wants someone to act.
    var isOpen: Bool { self.ack == nil && !self.resolved }

    /// Records a copy sent to `recipient` under `relayID`.
    mutating func add(copy relayID: String, to recipient: Endpoint) {
        self.copyOrder[relayID] = self.copies.count
        self.copies[relayID] = recipient
        if !self.recipients.contains(recipient) { self.recipients.append(recipient) }
    }
}

/// A page's identity: its source transport and its id there.
struct PageKey: Hashable, Sendable, CustomStringConvertible {
    var source: String
    var id: String

    var description: String { "\(self.source)/\(self.id)" }
}
