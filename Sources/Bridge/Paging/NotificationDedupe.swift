import Foundation
import TransportCore

/// Which monitoring notifications a channel accepted lately (issue 24): an Alertmanager
/// HA pair whose gossip failed sends each notification from every replica, with the same
/// `groupKey`, status and alert fingerprints (``AlertNotification/deduplicationKey``); the
/// second within the channel's `dedupe_window` is answered with the first's id and not
/// relayed. A notification of the group with another status (RESOLVED after FIRING, a
/// FIRING again) makes the group's earlier keys forgotten: a re-fired alert is news. Pure;
/// the pipeline persists what it remembers.
struct NotificationDedupe: Sendable {
    /// What is known of one notification.
    struct Entry: Hashable, Sendable {
        var id: String
        var at: Date
        /// Its message's commit succeeded (until then a copy must wait, not be answered).
        var committed: Bool
    }

    /// What a notification is, seen against those accepted lately.
    enum Lookup: Hashable, Sendable {
        case new
        /// The same one is being committed: the copy must be tried again.
        case pending
        /// The same one was accepted under this id.
        case duplicate(of: String)
    }

    private var entries: [String: Entry] = [:]
    /// The longest window any channel may have; older entries are forgotten.
    static let longestWindow: TimeInterval = 86_400

    /// `channel` ␞ kind ␟ group ␟ status ␟ alerts…
    static func key(channel: String, _ notification: AlertNotification) -> String {
        "\(channel)\u{1E}\(notification.deduplicationKey)"
    }

    /// The group a key belongs to (channel, kind and group) and its status.
    private static func group(of key: String) -> (group: String, status: String)? {
        let fields = key.split(separator: "\u{1F}", omittingEmptySubsequences: false)
        guard fields.count >= 3 else { return nil }
        return ("\(fields[0])\u{1F}\(fields[1])", String(fields[2]))
    }

    func lookup(_ key: String, window: Duration, at now: Date) -> Lookup {
        guard let entry = self.entries[key], now.timeIntervalSince(entry.at) < window.seconds, entry.at <= now.addingTimeInterval(1) else { return .new }
        return entry.committed ? .duplicate(of: entry.id) : .pending
    }

    /// Remembers `key` as accepted under `id` (pending until ``committed(_:)``, unless
    /// `committed`), forgetting the group's keys with another status.
    mutating func remember(_ key: String, id: String, at now: Date, committed: Bool = false) {
        if let (group, status) = Self.group(of: key) {
            self.entries = self.entries.filter { entry in
                guard let other = Self.group(of: entry.key) else { return true }
                return other.group != group || other.status == status
            }
        }
        self.entries[key] = Entry(id: id, at: now, committed: committed)
        if self.entries.count > 10_000 { self.forget(before: now) }
    }

    /// Its message was committed: copies are duplicates from now on.
    mutating func committed(_ key: String) {
        self.entries[key]?.committed = true
    }

    /// Forgets `key`: its message was not committed after all, so a retry is new.
    mutating func forget(_ key: String) {
        self.entries.removeValue(forKey: key)
    }

    /// Forgets what is older than the longest window.
    mutating func forget(before now: Date) {
        let limit = now.addingTimeInterval(-Self.longestWindow)
        self.entries = self.entries.filter { $0.value.at >= limit }
    }
}
