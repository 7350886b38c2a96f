/// When to try roster mirrors again after a change was refused (issue 13, defect 3; issue 8,
/// "coordinators become pure machines"): one schedule for all mirrors, one timer.
///
/// Each failing mirror waits `initialDelay · 2^(failures-1)`, capped at `maximumDelay`; a
/// failure while a retry is already scheduled (another roster change tried meanwhile) leaves
/// that retry as it is; a success forgets the mirror; a reload (``reset()``) forgets
/// everything. The owner arms one timer
/// for ``nextDeadline`` and calls ``due(now:)`` when it fires. No I/O, time passed in.
package struct RosterMirrorRetrySchedule<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    package struct Configuration: Sendable, Equatable {
        package var initialDelay: Duration = .seconds(30)
        package var maximumDelay: Duration = .seconds(1_800)

        package init(initialDelay: Duration = .seconds(30), maximumDelay: Duration = .seconds(1_800)) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
        }
    }

    private struct Entry: Sendable {
        var failures: Int
        /// Nil while the retry runs.
        var deadline: Instant?
    }

    package let configuration: Configuration
    private var entries: [String: Entry] = [:]

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Mirror `id` failed at `now`; returns when it will be retried.
    @discardableResult
    package mutating func failed(_ id: String, now: Instant) -> Instant {
        if let pending = self.entries[id]?.deadline, pending > now { return pending }
        let failures = (self.entries[id]?.failures ?? 0) + 1
        var delay = self.configuration.initialDelay
        var step = 1
        while step < failures, delay < self.configuration.maximumDelay {
            delay *= 2
            step += 1
        }
        let deadline = now.advanced(by: min(delay, self.configuration.maximumDelay))
        self.entries[id] = Entry(failures: failures, deadline: deadline)
        return deadline
    }

    /// Mirror `id` went through: no retry pending, the backoff starts over next time.
    package mutating func succeeded(_ id: String) {
        self.entries.removeValue(forKey: id)
    }

    /// The mirrors whose retry is due at `now`, sorted; they stay counted until they
    /// succeed or fail again.
    package mutating func due(now: Instant) -> [String] {
        let ids = self.entries.filter { $0.value.deadline.map { $0 <= now } ?? false }.map(\.key).sorted()
        for id in ids { self.entries[id]?.deadline = nil }
        return ids
    }

    /// The earliest pending retry, for the one timer.
    package var nextDeadline: Instant? { self.entries.values.compactMap(\.deadline).min() }

    /// How many mirrors wait for a retry.
    package var pendingCount: Int { self.entries.count }

    /// Forgets every pending retry (a reload reconciles everything anyway).
    package mutating func reset() {
        self.entries.removeAll()
    }
}
