import Foundation
import TransportCore

/// Which monitoring notifications a channel accepted lately (issue 24): an Alertmanager
/// HA pair whose gossip failed sends each notification from every replica, with the same
/// `groupKey`, status and alert fingerprints (``AlertNotification/deduplicationKey``); the
/// second within the channel's `dedupe_window` is answered with the first's id and not
/// relayed. A notification of the group with another status (RESOLVED after FIRING, a
/// FIRING again) makes the group's earlier keys forgotten: a re-fired alert is news. Pure;
/// the pipeline persists what it remembers.
package struct NotificationDedupe: Sendable {
    /// What is known of one notification.
    package struct Entry: Hashable, Sendable {
        package var id: String
        package var at: Date
        /// Its message's commit succeeded (until then a copy must wait, not be answered).
        package var committed: Bool

        package init(id: String, at: Date, committed: Bool) {
            self.id = id
            self.at = at
            self.committed = committed
        }
    }

    /// What a notification is, seen against those accepted lately.
    package enum Lookup: Hashable, Sendable {
        case new
        /// The same one is being committed: the copy must be tried again.
        case pending
        /// The same one was accepted under this id.
        case duplicate(of: String)
    }

    private var entries: [String: Entry] = [:]
    /// Each group's status now and its keys (channel ␞ kind ␟ group → …), so a change of
    /// status forgets the group's keys without looking at any other.
    private var groups: [Substring: (status: Substring, keys: Set<String>)] = [:]
    /// The longest window any channel may have; older entries are forgotten.
    package static let longestWindow: TimeInterval = 86_400

    /// `channel` ␞ kind ␟ group ␟ status ␟ alerts…
    package static func key(channel: String, _ notification: AlertNotification) -> String {
        "\(channel)\u{1E}\(notification.deduplicationKey)"
    }

    /// The group a key belongs to (channel, kind and group) and its status.
    private static func group(of key: String) -> (group: Substring, status: Substring)? {
        guard let first = key.firstIndex(of: "\u{1F}"),
            let second = key[key.index(after: first)...].firstIndex(of: "\u{1F}")
        else { return nil }
        let rest = key[key.index(after: second)...]
        return (key[..<second], rest[..<(rest.firstIndex(of: "\u{1F}") ?? rest.endIndex)])
    }

    package func lookup(_ key: String, window: Duration, at now: Date) -> Lookup {
        guard let entry = self.entries[key], now.timeIntervalSince(entry.at) < window.seconds, entry.at <= now.addingTimeInterval(1) else { return .new }
        return entry.committed ? .duplicate(of: entry.id) : .pending
    }

    /// Remembers `key` as accepted under `id` (pending until ``committed(_:)``, unless
    /// `committed`), forgetting the group's keys with another status.
    package mutating func remember(_ key: String, id: String, at now: Date, committed: Bool = false) {
        if let (group, status) = Self.group(of: key) {
            if let known = self.groups[group], known.status != status {
                for old in known.keys { self.entries.removeValue(forKey: old) }
                self.groups[group] = (status, [])
            }
            self.groups[group, default: (status, [])].keys.insert(key)
        }
        self.entries[key] = Entry(id: id, at: now, committed: committed)
        if self.entries.count > 10_000 { self.forget(before: now) }
    }

    /// Its message was committed: copies are duplicates from now on.
    package mutating func committed(_ key: String) {
        self.entries[key]?.committed = true
    }

    /// Forgets `key`: its message was not committed after all, so a retry is new.
    package mutating func forget(_ key: String) {
        self.entries.removeValue(forKey: key)
    }

    /// Forgets what is older than the longest window.
    package mutating func forget(before now: Date) {
        let limit = now.addingTimeInterval(-Self.longestWindow)
        self.entries = self.entries.filter { $0.value.at >= limit }
        self.groups = self.groups.compactMapValues { group in
            let keys = group.keys.filter { self.entries[$0] != nil }
            return keys.isEmpty ? nil : (group.status, keys)
        }
    }
}
