import Foundation
import LocalArchive
import OMEMOState
import StanzaIdentity
import TransportCore

/// One change to the relay's durable state, written by the ``Journal`` in a group commit.
package enum JournalEntry: Sendable {
    /// A delivery enters the queue (its sequence already assigned), with its relay id in the id map.
    case enqueue(Delivery, enqueuedAt: Date, attempts: Int)
    /// The target took it: it leaves the queue.
    case complete(sequence: Int64)
    /// An attempt failed; it stays queued with this count and error.
    case attempted(sequence: Int64, attempts: Int, error: String)
    /// It moves to the dead letters (from the queue if it is still there).
    case deadLetter(Delivery, enqueuedAt: Date, attempts: Int, reason: String)
    /// A dead letter is forgotten (dropped, or queued anew by a retry).
    case removeDeadLetter(sequence: Int64)
    /// An account's resumable stream management session as it is now; nil: none.
    case streamSession(transport: String, StoredStreamSession?)
    /// The account's inbound count went this far with the messages of this commit.
    case sourcePosition(transport: String, sequence: UInt32)
    /// A message with this deduplication key (``InboundMessage/deduplicationKey``) was
    /// handled (relayed or deliberately not): never again.
    case seen(transport: String, deduplicationKey: String)
    /// A source's resume point (``ResumePoint``), under its storage key.
    case resumePoint(key: String, position: String)
    /// Only the newest `keep` deduplication keys of the transport are remembered.
    case trimSeen(transport: String, keep: Int)
    /// The recipient of a relayed copy sent a receipt (XEP-0184) or a displayed marker
    /// (XEP-0333) for it; recorded only if `target` is where that copy went.
    case receipt(relayID: String, target: Endpoint, displayed: Bool, at: Date)
    /// The room `target` gave our copy `relayID` this stanza-id (XEP-0359), seen on its
    /// reflection: replies, reactions and retractions in the room refer to it (issue 12).
    case copyStanzaID(relayID: String, target: Endpoint, stanzaID: StanzaID)
    /// The room a relayed message came from gave it this stanza-id.
    case sourceStanzaID(source: Endpoint, sourceID: String, stanzaID: StanzaID)
    /// An alert of a paging channel as it is now (issue 24): created, acknowledged,
    /// repeated, escalated or resolved.
    case page(Page)
    /// A monitoring notification was accepted under `id` (de-duplication across an
    /// Alertmanager HA pair, issue 24), `key` being ``NotificationDedupe/key(channel:_:)``.
    case notificationAccepted(key: String, id: String, at: Date)
    /// A delivery postponed until `releaseAt` (issue 24): over its target's `max_per_minute`
    /// (`flood`, released into a digest) or in its member's quiet hours.
    case postpone(Delivery, releaseAt: Date, flood: Bool)
    /// Pages made at or before `pagesBefore` and notifications accepted before
    /// `notificationsBefore` are forgotten.
    case prunePaging(pagesBefore: Date, notificationsBefore: Date)
    /// Postponed deliveries released (queued, or gathered into a digest queued in the same commit).
    case releasePostponed(relayIDs: [String])
    /// A message goes into the local archive (issue 25), in the commit that relays it, as
    /// the row its INSERT binds (one reference to copy on the way).
    case archive(ArchiveRow)
    /// Message `sourceID` from `source` was corrected to `body` (XEP-0308), or retracted
    /// (nil; XEP-0424): its archived entries in `channels` change. From a room, only the
    /// entry of the same occupant (`nick`): an occupant's ids are visible to the others.
    case archiveEdit(channels: [String], source: Endpoint, nick: String?, sourceID: String, body: String?, at: Date)
    /// An OMEMO account's state changed (issue 41): keys, trust, device lists. Committed
    /// before the message it concerns is written or relayed.
    case omemo(account: String, [OMEMOStateChange])
    /// An account's login state changed (issue 43): its user agent id was made, or a FAST
    /// token taken, rotated or forgotten.
    case login(transport: String, StoredLogin)
    /// The archive's full-text index takes what it does not have yet, in one batch.
    case indexArchive
    /// At most `limit` of `channel`'s archived messages older than `before` are forgotten.
    case pruneArchive(channel: String, before: Date, limit: Int)

    /// `message` goes into the local archive.
    package static func archive(_ message: ArchivedMessage) -> JournalEntry {
        .archive(ArchiveRow(message))
    }

    /// An archive row rides along in a commit that happens for the relay's own entries and
    /// never hastens one: counted towards ``Journal/applyBatch``, a fifth entry per relayed
    /// message made commits that much more frequent in bursts.
    package var ridesAlong: Bool {
        if case .archive = self { true } else { false }
    }

    /// A delivery's completion: nothing waits for it to be durable.
    package var isCompletion: Bool {
        if case .complete = self { true } else { false }
    }
}
