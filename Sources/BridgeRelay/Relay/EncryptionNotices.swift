import BridgeRouting
import Foundation
import TransportCore

/// Whom the bridge has told lately that it cannot relay encrypted messages (issue 12): one
/// notice per conversation (source endpoint) per `interval`, kept in memory, so a user
/// who writes with OMEMO on learns why nothing arrives without getting a notice per message.
/// After a restart a conversation may get one more notice.
package struct EncryptionNotices: Sendable {
    package let interval: TimeInterval
    /// Conversations remembered at most; the oldest notices are forgotten first.
    package let capacity: Int
    private var lastNotice: [Endpoint: Date] = [:]

    package init(interval: TimeInterval = 24 * 3600, capacity: Int = 10_000) {
        self.interval = interval
        self.capacity = capacity
    }

    /// Whether `conversation` is due a notice at `now`; if so, it counts as told.
    package mutating func shouldNotify(_ conversation: Endpoint, now: Date) -> Bool {
        let key = Router.normalized(conversation)
        if let last = self.lastNotice[key], now.timeIntervalSince(last) < self.interval, now >= last { return false }
        if self.lastNotice.count >= self.capacity {
            self.lastNotice = self.lastNotice.filter { now.timeIntervalSince($0.value) < self.interval }
            if self.lastNotice.count >= self.capacity, let oldest = self.lastNotice.min(by: { $0.value < $1.value }) {
                self.lastNotice.removeValue(forKey: oldest.key)
            }
        }
        self.lastNotice[key] = now
        return true
    }
}
