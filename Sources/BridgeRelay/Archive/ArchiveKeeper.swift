import BridgeState
import Foundation
import Logging
import ServiceLifecycle

/// Keeps the local archive (issue 25): a Service under the bridge's ServiceGroup that, at
/// start and then every `interval` on its clock, brings the full-text index up to date
/// and forgets what is older than each channel's `archive_days`, in journal commits of at
/// most `batch` messages, so a large backlog never holds one long transaction in front of
/// the relay's commits. Never on the relay path: the relay only ever inserts.
package final class ArchiveKeeper<C: Clock>: Service where C.Duration == Duration {
    private let journal: Journal
    /// Each archived channel's retention in days (0: for ever), as configured now.
    private let retention: @Sendable () async -> [String: Int]
    private let clock: C
    private let interval: Duration
    private let batch: Int
    private let now: @Sendable () -> Date
    private let logger: Logger

    package init(
        journal: Journal, retention: @escaping @Sendable () async -> [String: Int], clock: C, interval: Duration = .seconds(3600), batch: Int = 1000,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger
    ) {
        self.journal = journal
        self.retention = retention
        self.clock = clock
        self.interval = interval
        self.batch = batch
        self.now = now
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.prune()
                guard (try? await self.clock.sleep(for: self.interval)) != nil else { return }
            }
        }
    }

    /// Indexes what the index lacks, then forgets every archived message past its
    /// channel's retention; how many.
    @discardableResult
    package func prune() async -> Int {
        do {
            try await self.journal.commit([.indexArchive])
        } catch {
            self.logger.error("cannot index the archive; tried again later", metadata: ["error": "\(error)"])
        }
        var pruned = 0
        let now = self.now()
        for (channel, days) in await self.retention().sorted(by: { $0.key < $1.key }) where days > 0 {
            let before = now.addingTimeInterval(-Double(days) * 86_400)
            do {
                let journal = self.journal
                let found = try await journal.read { store throws(StateStoreError) in try store.archivedCount(channel: channel, before: before) }
                guard found > 0 else { continue }
                var remaining = found
                while remaining > 0, !Task.isCancelled {
                    try await journal.commit([.pruneArchive(channel: channel, before: before, limit: self.batch)])
                    remaining -= self.batch
                }
                let left = try await journal.read { store throws(StateStoreError) in try store.archivedCount(channel: channel, before: before) }
                pruned += found - left
                self.logger.info("archive pruned", metadata: ["channel": "\(channel)", "messages": "\(found - left)", "days": "\(days)"])
            } catch {
                self.logger.error("cannot prune the archive; tried again later", metadata: ["channel": "\(channel)", "error": "\(error)"])
            }
        }
        return pruned
    }
}
