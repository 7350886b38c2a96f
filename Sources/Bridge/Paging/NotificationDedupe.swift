import Foundation
import TransportCore

/// Which monitoring notifications a channel accepted lately (issue 24): an Alertmanager
/// HA pair whose gossip failed sends each notification from every replica, with the same
/// `groupKey`, status and alert fingerprints (``AlertNotification/deduplicationKey``); the
/// second within the channel's `dedupe_window` is answered with the first's id and not
/// relayed. Pure; the pipeline persists what it remembers.
struct NotificationDedupe: Sendable {
    struct Entry: Hashable, Sendable {
        var id: String
        var at: Date
    }

    private var entries: [String: Entry] = [:]
    /// The longest window any channel may have; older entries are forgotten.
    static let longestWindow: TimeInterval = 86_400

    static func key(channel: String, _ notification: AlertNotification) -> String {
        "\(channel)\u{1E}\(notification.deduplicationKey)"
    }

    /// The id the same notification was accepted under within `window` before `now`.
    func duplicate(of key: String, window: Duration, at now: Date) -> String? {
        guard let entry = self.entries[key], now.timeIntervalSince(entry.at) < window.seconds, entry.at <= now.addingTimeInterval(1) else { return nil }
        return entry.id
    }

    mutating func remember(_ key: String, id: String, at now: Date) {
        self.entries[key] = Entry(id: id, at: now)
        if self.entries.count > 10_000 { self.forget(before: now) }
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
