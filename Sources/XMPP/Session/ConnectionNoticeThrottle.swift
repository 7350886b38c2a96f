/// Holds back the per-account warnings of connections that fail or drop when many do at
/// once: a server restart under thousands of accounts would otherwise write two lines per
/// account ("connection failed; retrying", "offline"). In each interval the first `burst`
/// notices are logged as they come; the rest are counted, and the next notice or login
/// after the interval sums them up in one line (``Summary``). A pure value: the caller
/// passes the time and writes the lines.
public struct ConnectionNoticeThrottle<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// How notices are grouped: the window's length, and how many of each are logged.
    public struct Configuration: Sendable {
        /// How long one window of notices lasts.
        public var interval: Duration
        /// Notices logged as they come in each window.
        public var burst: Int

        public init(interval: Duration = .seconds(10), burst: Int = 5) {
            self.interval = interval
            self.burst = max(0, burst)
        }
    }

    /// What a notice is about.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case connectionFailed = "connection failed; retrying"
        case offline = "offline"
    }

    /// Whether to write the notice now.
    public enum Decision: Hashable, Sendable {
        case log
        case hold
    }

    /// What a window held back: counts by kind, and the most frequent reason.
    public struct Summary: Hashable, Sendable, CustomStringConvertible {
        public var held: [Kind: Int]
        public var accounts: Int
        public var commonestReason: String?
        public var commonestCount: Int

        public var total: Int { self.held.values.reduce(0, +) }

        public var description: String {
            let kinds = Kind.allCases.compactMap { kind in self.held[kind].map { "\($0) \"\(kind.rawValue)\"" } }.joined(separator: ", ")
            let reason = self.commonestReason.map { "; most often: \($0) (\(self.commonestCount))" } ?? ""
            return "\(self.total) connection notices of \(self.accounts) accounts held back: \(kinds)\(reason)"
        }
    }

    public let configuration: Configuration
    private var windowStart: Instant?
    private var logged = 0
    private var held: [Kind: Int] = [:]
    private var accounts: Set<String> = []
    private var reasons: [String: Int] = [:]

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A notice of `account` at `now`; with what an ended window held back, if anything.
    public mutating func notice(_ kind: Kind, account: String, reason: String?, at now: Instant) -> (Decision, Summary?) {
        let summary = self.rollOver(at: now)
        if self.windowStart == nil { self.windowStart = now }
        guard self.logged >= self.configuration.burst else {
            self.logged += 1
            return (.log, summary)
        }
        self.held[kind, default: 0] += 1
        self.accounts.insert(account)
        if let reason { self.reasons[reason, default: 0] += 1 }
        return (.hold, summary)
    }

    /// An account logged in at `now`: what an ended window held back, if anything.
    public mutating func settled(at now: Instant) -> Summary? {
        self.rollOver(at: now)
    }

    private mutating func rollOver(at now: Instant) -> Summary? {
        guard let start = self.windowStart, start.duration(to: now) >= self.configuration.interval else { return nil }
        defer {
            self.windowStart = nil
            self.logged = 0
            self.held = [:]
            self.accounts = []
            self.reasons = [:]
        }
        guard !self.held.isEmpty else { return nil }
        let commonest = self.reasons.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
        return Summary(held: self.held, accounts: self.accounts.count, commonestReason: commonest?.key, commonestCount: commonest?.value ?? 0)
    }
}
