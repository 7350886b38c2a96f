import Foundation
import TransportCore

/// At most `max_per_minute` messages per target (issue 24): the first ones of a minute go,
/// the rest are postponed and gathered into one digest when the minute ends; priority 5
/// passes always. A minute starts with the first message after the previous one ended.
/// Pure; the pipeline postpones and releases.
package struct FloodGate: Sendable {
    /// One target's current minute: when it began and how many messages went in it.
    private struct Window {
        var start: Date
        var count: Int
    }

    private var windows: [Endpoint: Window] = [:]
    package static let minute: TimeInterval = 60

    package init() {}

    /// Whether a message to `target` goes now under `limit`; when not, the time its
    /// minute ends (when the digest goes).
    package mutating func admit(_ target: Endpoint, limit: Int, priority: Int, at now: Date) -> Date? {
        var window = self.windows[target].flatMap { now.timeIntervalSince($0.start) < Self.minute ? $0 : nil } ?? Window(start: now, count: 0)
        defer { self.windows[target] = window }
        if priority >= 5 { return nil }
        guard window.count >= limit else {
            window.count += 1
            return nil
        }
        return window.start.addingTimeInterval(Self.minute)
    }

    /// Forgets windows that ended (keeps memory bounded).
    package mutating func forget(before now: Date) {
        self.windows = self.windows.filter { now.timeIntervalSince($0.value.start) < Self.minute }
    }
}
