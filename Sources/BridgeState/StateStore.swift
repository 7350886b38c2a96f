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
///
/// It is the sum of one protocol per concern (`Stores/`): the journal's writes, the
/// queue, dead letters, the sources' progress, the id map, routes, paging, gateway
/// registrations, roster mirrors, the archive's reads and OMEMO accounts' state. A part of the bridge that needs
/// one concern takes that protocol (a roster mirror takes a ``RosterMirrorStore``).
package protocol StateStore:
    JournalStore, DeliveryQueueStore, DeadLetterStore, SourceProgressStore, RelayMapStore, RouteStore, PagingStore,
    GatewayRegistrationStore, RosterMirrorStore, ArchiveStore, OMEMOStore
{
    /// Where the state lives (a file, `:memory:`, or a PostgreSQL URL without its password).
    var location: String { get }
    /// Reads the time for `changed_at`, `created_at` and `enqueued_at` (injected for tests).
    var now: @Sendable () -> Date { get }
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
