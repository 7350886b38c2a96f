import Logging

/// How a session reports stanzas it ignores (spoofed replies, forged carbons, strangers'
/// roster pushes, unknown elements): each at debug level, and at most one summary per
/// `window` at notice level with the count and the first reasons. A stranger who floods
/// us with such stanzas costs one log line a minute, not one per stanza.
///
/// Pure: the owner passes the time of each event and logs what comes back, or has
/// ``log(_:now:to:)`` do it.
public struct IgnoredStanzaLog<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// What to log at notice level: how many stanzas were ignored since `since`, and the
    /// first few reasons (escaped, shortened).
    public struct Summary: Hashable, Sendable {
        public var count: Int
        public var examples: [String]
    }

    public let window: Duration
    public let maximumExamples: Int
    private var windowStart: Instant?
    private var count = 0
    private var examples: [String] = []

    public init(window: Duration = .seconds(60), maximumExamples: Int = 3) {
        self.window = window
        self.maximumExamples = maximumExamples
    }

    /// A stanza was ignored for `reason` (peer-supplied text inside is escaped here). The
    /// first ignore of a quiet period is summarised at once; the rest of the window's are
    /// summarised with the first ignore after the window ends.
    public mutating func ignored(_ reason: String, now: Instant) -> Summary? {
        let shown = Self.shortened(VisibleText.escaped(reason))
        if let start = self.windowStart, start.duration(to: now) < self.window {
            self.count += 1
            if self.examples.count < self.maximumExamples { self.examples.append(shown) }
            return nil
        }
        // A new window: report what the last one held (if anything), then this one.
        var summary = Summary(count: self.count + 1, examples: self.examples)
        if summary.examples.count < self.maximumExamples { summary.examples.append(shown) }
        self.windowStart = now
        self.count = 0
        self.examples = []
        return summary
    }

    /// The text of a debug line for `reason`.
    public static func describe(_ reason: String) -> String {
        Self.shortened(VisibleText.escaped(reason))
    }

    static func shortened(_ text: String, limit: Int = 200) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}

extension IgnoredStanzaLog {
    /// Counts one ignored stanza and logs it: at debug level, and the summary when one is due.
    /// A stranger can send such stanzas at will, hence never more than that.
    public mutating func log(_ reason: String, now: Instant, to logger: Logger) {
        logger.debug("ignored stanza", metadata: ["reason": "\(Self.describe(reason))"])
        guard let summary = self.ignored(reason, now: now) else { return }
        logger.notice(
            "ignored stanzas (spoofed replies, forged carbons, strangers' roster pushes, …); each at debug level",
            metadata: ["count": "\(summary.count)", "examples": "\(summary.examples.joined(separator: " | "))"]
        )
    }
}
