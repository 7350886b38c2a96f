/// When a quiet connection is pinged and when it is given up as dead (XEP-0199 §4.2,
/// client-to-server pings): after `interval` without inbound traffic, ping; if nothing at
/// all arrives within `timeout` after the ping, the connection is dead. Any inbound
/// traffic, the answer included, proves the link alive.
///
/// It does no I/O and reads no clock: the owner reports traffic, sleeps until
/// ``nextDeadline`` and calls ``timerFired(now:)``.
public struct KeepaliveStateMachine<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    public struct Configuration: Hashable, Sendable {
        public var interval: Duration
        public var timeout: Duration

        public init(interval: Duration = .seconds(60), timeout: Duration = .seconds(20)) {
            self.interval = interval
            self.timeout = timeout
        }
    }

    public enum State: Hashable, Sendable {
        /// Traffic last seen at `lastTraffic`.
        case quiet(lastTraffic: Instant)
        /// A ping went out at `sentAt`; nothing has arrived since.
        case pinging(sentAt: Instant)
        /// Given up on the connection.
        case dead
    }

    public enum Action: Hashable, Sendable {
        /// Sleep until ``KeepaliveStateMachine/nextDeadline``.
        case wait
        /// Send a ping now.
        case sendPing
        /// Close the connection: it is dead.
        case connectionDead
    }

    public let configuration: Configuration
    public private(set) var state: State

    public init(configuration: Configuration = Configuration(), now: Instant) {
        self.configuration = configuration
        self.state = .quiet(lastTraffic: now)
    }

    /// Something arrived on the connection.
    public mutating func trafficReceived(now: Instant) {
        switch self.state {
        case .quiet, .pinging:
            self.state = .quiet(lastTraffic: now)
        case .dead:
            break
        }
    }

    /// When the owner should call ``timerFired(now:)`` next; nil once dead.
    public var nextDeadline: Instant? {
        switch self.state {
        case .quiet(let last): last.advanced(by: self.configuration.interval)
        case .pinging(let sentAt): sentAt.advanced(by: self.configuration.timeout)
        case .dead: nil
        }
    }

    public mutating func timerFired(now: Instant) -> Action {
        switch self.state {
        case .quiet(let last):
            guard last.duration(to: now) >= self.configuration.interval else { return .wait }
            self.state = .pinging(sentAt: now)
            return .sendPing
        case .pinging(let sentAt):
            guard sentAt.duration(to: now) >= self.configuration.timeout else { return .wait }
            self.state = .dead
            return .connectionDead
        case .dead:
            return .wait
        }
    }
}
