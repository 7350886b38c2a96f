import Foundation
import LocalArchive
import TransportCore

/// The bridge's persisted state behind one interface (issue 26, "State behind one
/// interface"): runtime routes, the relay id map, the durable queue and its dead letters,
/// stream management sessions and resume points, paging, gateway registrations, roster
/// mirror snapshots and the local archive.
///
/// Two implementations share one schema and one set of tests: ``SQLiteStateStore`` (the
/// embedded default, one host) and ``PostgresStateStore`` (several instances on one
/// database). The relay writes only through the ``Journal``, which hands each group commit
/// to ``apply(_:intakeThrough:as:)``; everything else reads, or edits while no daemon runs.
/// Every method is one transaction, blocking: callers run it on the journal's thread or
/// off any event loop. Every failure is a ``StateStoreError``.
package protocol StateStore: AnyObject, Sendable {
    /// Where the state lives (a file, `:memory:`, or a PostgreSQL URL without its password).
    var location: String { get }
    /// Reads the time for `changed_at`, `created_at` and `enqueued_at` (injected for tests).
    var now: @Sendable () -> Date { get }

    // MARK: Journal

    /// Applies `entries` in one transaction, with the intake log position they reach.
    func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?, as operation: StateStoreError.Operation) throws(StateStoreError)
    /// Applies `entries` one by one in one transaction, each on its own (a savepoint): one
    /// that cannot be applied is handed to `dropped` and left out.
    func applyEach(
        _ entries: ArraySlice<JournalEntry>, intakeThrough: IntakeLogFile.Position?, dropped: (JournalEntry, any Error) -> Void
    ) throws(StateStoreError)
    /// How far the intake log is applied (``IntakeLogFile/Position``); nil before it ever was.
    func intakeApplied() throws(StateStoreError) -> IntakeLogFile.Position?
    /// The highest sequence ever used by the queue or the dead letters (0 when none).
    func lastSequence() throws(StateStoreError) -> Int64

    // MARK: Queue

    /// Stores `deliveries` in one transaction, with their relay ids, and returns them in the
    /// same order with `sequence` set (increasing, never reused).
    func enqueue(_ deliveries: [Delivery]) throws(StateStoreError) -> [Delivery]
    /// The oldest `limit` deliveries waiting for `transport`, in queue order.
    func pending(transport: String, limit: Int) throws(StateStoreError) -> [Delivery]
    /// Removes a delivered (or permanently failed) delivery; false if it was not queued.
    @discardableResult func complete(sequence: Int64) throws(StateStoreError) -> Bool
    /// Removes several delivered deliveries in one transaction.
    func complete(sequences: [Int64]) throws(StateStoreError)
    /// Removes `transport`'s deliveries its server acknowledged before a restart (their ids
    /// from the stream ledger); with `firstAttemptsOnly`, only deliveries never tried again
    /// (a retried one may have bounced after its acknowledgement).
    func completeAcknowledged(transport: String, relayIDs: [String], firstAttemptsOnly: Bool) throws(StateStoreError)
    /// How many deliveries wait for `transport`, or for every transport when nil.
    func pendingCount(transport: String?) throws(StateStoreError) -> Int
    /// The transports with deliveries waiting, sorted by name.
    func allPendingTransports() throws(StateStoreError) -> [String]
    /// Every queued delivery with its attempts and enqueue time, in queue order.
    func loadQueue() throws(StateStoreError) -> [QueuedDeliveryRecord]
    /// The enqueue time of the oldest delivery waiting for `transport`.
    func oldestPending(transport: String) throws(StateStoreError) -> Date?

    // MARK: Sources and sessions

    /// Every account's stored stream management session (XEP-0198), by account name.
    func streamSessions() throws(StateStoreError) -> [String: StoredStreamSession]
    /// Every stored resume point's position (``ResumePoint``), by storage key.
    func resumePoints() throws(StateStoreError) -> [String: String]
    /// The newest `limit` unique ids each transport handled, oldest first.
    func seenDeduplicationKeys(limit: Int) throws(StateStoreError) -> [String: [String]]

    // MARK: Dead letters

    /// Dead letters, oldest first, for `transport` or every transport.
    func deadLetters(transport: String?) throws(StateStoreError) -> [DeadLetterRecord]
    func deadLetterCount(transport: String) throws(StateStoreError) -> Int
    /// Queues dead letters anew (attempts reset, fresh sequences); nil means all. How many.
    @discardableResult func retryDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int
    /// Forgets dead letters; nil means all. How many.
    @discardableResult func dropDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int

    // MARK: Id map

    /// Records the relay ids of deliveries sent without queueing (a known one changes nothing).
    func recordRelays(_ deliveries: [Delivery]) throws(StateStoreError)
    /// Every relayed copy of the stanza `id` received from `transport`/`address`, oldest first.
    func relays(forSource transport: String, address: String?, id: String) throws(StateStoreError) -> [RelayRecord]
    /// The ids each endpoint knows the message `id` by, where `source` refers to it.
    func references(to id: String, from source: Endpoint, ownOnly: Bool, nick: String?) throws(StateStoreError) -> ReferenceMap
    /// The copy sent with relay id `id`, if the id map still has it.
    func relay(_ id: String) throws(StateStoreError) -> RelayRecord?
    /// Each of `relayIDs` that is a dead letter, with its reason.
    func deadLetterReasons(relayIDs: [String]) throws(StateStoreError) -> [String: String]
    /// Whether `id` is one this bridge generated for a relayed copy (an echo).
    func isRelayID(_ id: String) throws(StateStoreError) -> Bool
    /// Forgets relays recorded before `date`; how many.
    @discardableResult func pruneRelays(before date: Date) throws(StateStoreError) -> Int

    // MARK: Routes

    /// Every stored route change, oldest first (at most one per channel and endpoint).
    func routes() throws(StateStoreError) -> [RouteChange]
    /// Records that `member` joins `channel` (replacing an earlier change for its endpoint).
    func addRoute(channel: String, member: ChannelMember) throws(StateStoreError)
    /// Records that `endpoint` leaves `channel` (replacing an earlier change for it).
    func removeRoute(channel: String, endpoint: Endpoint) throws(StateStoreError)

    // MARK: Paging, gateways, roster mirrors

    /// Pages created at or after `since`, oldest first; rows this build cannot read skipped.
    func pages(since: Date) throws(StateStoreError) -> [Page]
    /// Notifications accepted at or after `since`: key, message id, when.
    func acceptedNotifications(since: Date) throws(StateStoreError) -> [(key: String, id: String, at: Date)]
    /// Postponed deliveries, in the order they were postponed.
    func postponedDeliveries() throws(StateStoreError) -> [PostponedDeliveries.Postponement]
    /// Every in-band registration (XEP-0077), by gateway and user.
    func gatewayRegistrations() throws(StateStoreError) -> [GatewayRegistrationRecord]
    /// Stores (or replaces) a registration.
    func saveGatewayRegistration(_ record: GatewayRegistrationRecord) throws(StateStoreError)
    /// Forgets `user`'s registrations, with `gateway` only or with any; how many.
    @discardableResult func removeGatewayRegistrations(gateway: String?, user: String) throws(StateStoreError) -> Int
    /// The stored snapshot of the mirror direction `id`; empty when none was saved.
    func rosterMirrorSnapshot(id: String) throws(StateStoreError) -> RosterMirrorSnapshot
    /// Stores `snapshot` as the mirror direction `id`'s, replacing the previous one.
    func saveRosterMirrorSnapshot(_ snapshot: RosterMirrorSnapshot, id: String) throws(StateStoreError)

    // MARK: Archive

    /// How many of `channel`'s messages are older than `before`.
    func archivedCount(channel: String, before: Date) throws(StateStoreError) -> Int
    /// What `query` asks for, once the full-text index has everything archived.
    func indexedAndRead(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage
    /// What `query` asks for: newest first, or best first for a ranked search.
    func archived(_ query: ArchiveQuery) throws(StateStoreError) -> ArchivePage
}

extension StateStore {
    package func apply(_ entries: [JournalEntry], intakeThrough: IntakeLogFile.Position?) throws(StateStoreError) {
        try self.apply(entries, intakeThrough: intakeThrough, as: .enqueue)
    }

    package func completeAcknowledged(transport: String, relayIDs: [String]) throws(StateStoreError) {
        try self.completeAcknowledged(transport: transport, relayIDs: relayIDs, firstAttemptsOnly: true)
    }

    package func deadLetters() throws(StateStoreError) -> [DeadLetterRecord] {
        try self.deadLetters(transport: nil)
    }

    package func references(to id: String, from source: Endpoint, ownOnly: Bool = false) throws(StateStoreError) -> ReferenceMap {
        try self.references(to: id, from: source, ownOnly: ownOnly, nick: nil)
    }

    /// The routing table in effect: the stored changes applied over `channels` (see
    /// `RouteChange.apply(_:to:)`).
    package func applyRoutes(to channels: [RelayChannel]) throws(StateStoreError) -> [RelayChannel] {
        RouteChange.apply(try self.routes(), to: channels)
    }
}

/// The archive's bounds and times, the same in both stores.
extension StateStore {
    /// How many of a channel's newest archived messages a correction or retraction looks among.
    package static var editCandidates: Int { 1_000 }

    /// How far back (milliseconds) a correction or retraction looks for its message: a day.
    package static var editWindow: Int64 { 86_400_000 }

    /// A ranked search ranks at most this many of the newest matches.
    package static var rankedWindow: Int { 10_000 }

    /// Milliseconds since 1970 (the archive's times), clamped to what an Int64 holds (never
    /// a trap on a far date).
    package static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return Int64(exactly: value) ?? (value > 0 ? Int64.max / 2 : Int64.min / 2)
    }

    package static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
