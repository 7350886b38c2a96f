import BridgeState
import Foundation
import TransportCore
import XMPP

/// Deliveries queued for an account when this instance took it over from another (issue
/// 26): the former owner may have written some of them on its stream before it stopped,
/// and its stream positions went with it. The account's first session resumes the former
/// owner's stream management session if the server still holds it (XEP-0198 §5), and
/// looks their relay ids up in its own archive (XEP-0313, as for a session the server
/// lost) before it reports online; those found are completed, not sent again.
package struct InheritedDeliveries: Equatable, Sendable {
    /// Oldest first.
    package var relayIDs: [String]
    /// When the oldest was queued: no copy can be older.
    package var since: Date
    /// No later than the former owner's stream was lost: when it last renewed its lease
    /// (``LeaseTable/Taken``), else ``since``. A server restarted after this may have
    /// archived copies it never routed (``ArchiveCheckStateMachine``).
    package var lostSince: Date

    /// At most this many, oldest first: a former owner never had more in flight (its
    /// window of batches in flight, 4 of 100, and what it had seen taken but not yet committed are far fewer); later ones were never written. The archive check reads up to 20 pages of 50.
    package static let limit = 1_000

    /// From the queued rows read at takeover, for `account` (none: `since` is `now`).
    package init(_ queued: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)], account: String, now: Date = Date()) {
        let mine = queued.filter { $0.delivery.target.transport == account }.sorted { $0.delivery.sequence < $1.delivery.sequence }.prefix(Self.limit)
        let oldest = mine.map(\.enqueuedAt).min() ?? now
        self.relayIDs = mine.map(\.delivery.relayID)
        self.since = oldest
        self.lostSince = oldest
    }

    /// What the account's first session is given: these, and the former owner's stream
    /// management session from the shared state (`session`), to resume if the server
    /// still holds it.
    package func handed(with session: StoredStreamSession?, now: Date = Date()) -> PriorSession {
        PriorSession(session: session?.streamManagement, messageIDs: self.relayIDs, since: self.since, lostFor: .seconds(now.timeIntervalSince(self.lostSince)))
    }
}
