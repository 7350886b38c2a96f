import TestSupport
import XMPP

/// Collects a session's events so a test can wait for the one it expects.
public actor EventLog {
    public private(set) var events: [XMPPSessionEvent] = []

    public init() {}

    public func append(_ event: XMPPSessionEvent) {
        self.events.append(event)
    }

    /// Waits until an event satisfying `predicate` arrived (checking those already seen).
    /// Waits for an event satisfying `predicate` among those from index `start` on.
    public func waitFor(
        after start: Int = 0,
        timeout: Duration = .seconds(10),
        _ predicate: @Sendable (XMPPSessionEvent) -> Bool
    ) async -> XMPPSessionEvent? {
        var index = start
        return await eventuallyValue(timeout: timeout) { () -> XMPPSessionEvent? in
            while index < self.events.count {
                let event = self.events[index]
                index += 1
                if predicate(event) { return event }
            }
            return nil
        }
    }

    public var messages: [Message] {
        self.events.compactMap {
            if case .message(let message, nil) = $0 { return message }
            return nil
        }
    }

    /// The messages received so far once there are at least `count` (or all there are
    /// after `timeout`).
    public func messages(atLeast count: Int, timeout: Duration = .seconds(20)) async -> [Message] {
        let enough = await eventuallyValue(timeout: timeout) { () async -> [Message]? in
            let messages = self.messages
            return messages.count >= count ? messages : nil
        }
        return enough ?? self.messages
    }
}
