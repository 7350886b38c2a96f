import BridgeState
import Foundation
import TransportCore

/// Operator actions on the queue (`xmpp-bridge queue list|retry|drop`). Dead letters are
/// read on the journal's thread, never on the control server's event loop.
extension RelayPipeline {
    /// Queued deliveries (from memory) and dead letters (from the database), by sequence.
    package func queueEntries(transport: String?) async throws(StateStoreError) -> [QueueItemSummary] {
        var entries: [QueueItemSummary] = []
        for (name, worker) in self.targetTable.workers where transport == nil || transport == name {
            entries += worker.snapshot().pending.map {
                QueueItemSummary(delivery: $0.delivery, state: .queued, attempts: $0.attempts, enqueuedAt: $0.enqueuedAt, reason: $0.lastError)
            }
        }
        for (name, waiting) in self.targetTable.parked where transport == nil || transport == name {
            entries += waiting.map { QueueItemSummary(delivery: $0.delivery, state: .queued, attempts: $0.attempts, enqueuedAt: $0.enqueuedAt, reason: nil) }
        }
        entries += try await self.journal.read { store throws(StateStoreError) in try store.deadLetters(transport: transport) }.map(QueueItemSummary.init)
        if let queue = self.shared?.queue {
            // Several instances: what the others hold, from the shared queue.
            let here = Set(entries.map(\.delivery.sequence))
            entries += try await self.journal.read { _ throws(StateStoreError) in try queue.queued(transport: transport, limit: Self.listedLimit) }
                .filter { !here.contains($0.sequence ?? -1) }.map(QueueItemSummary.init)
        }
        return entries.sorted { $0.delivery.sequence < $1.delivery.sequence }
    }

    /// Dead letters queued anew (fresh sequences, attempts reset) and queued deliveries
    /// made eligible now; nil `sequences` retries every dead letter. Returns how many.
    package func retry(_ sequences: [Int64]?) async throws -> Int {
        let count = sequences.map(self.retryQueued) ?? 0
        if let sequences, self.shared != nil { await self.announce(.retry(sequences: sequences)) }
        let wanted = sequences.map(Set.init)
        let dead = try await self.journal.read { store throws(StateStoreError) in try store.deadLetters() }.filter { wanted?.contains($0.sequence) ?? true }
        guard !dead.isEmpty, let fresh = self.journal.assignSequences(dead.count) else { return count }
        let now = Date()
        var revived: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)] = []
        var entries: [JournalEntry] = []
        for (letter, sequence) in zip(dead, fresh) {
            var delivery = letter.delivery
            delivery.sequence = sequence
            entries.append(.removeDeadLetter(sequence: letter.sequence))
            entries.append(.enqueue(delivery, enqueuedAt: now, attempts: 0))
            revived.append((delivery, now, 0))
        }
        try await self.journal.commit(entries)
        self.outlets.deadLetters.withLockedValue { counts in
            for letter in dead { counts[letter.targetTransport, default: 1] -= 1 }
        }
        self.enqueue(revived)
        return count + dead.count
    }

    /// Queued deliveries and dead letters forgotten; nil `sequences` drops every dead letter.
    package func drop(_ sequences: [Int64]?) async throws -> Int {
        let (count, remaining) = self.dropQueued(sequences ?? [])
        if sequences != nil, self.shared != nil, !remaining.isEmpty { await self.announce(.drop(sequences: remaining.sorted())) }
        let dead = try await self.journal.read { store throws(StateStoreError) in try store.deadLetters() }.filter { sequences == nil || remaining.contains($0.sequence) }
        guard !dead.isEmpty else { return count }
        try await self.journal.commit(dead.map { .removeDeadLetter(sequence: $0.sequence) })
        self.outlets.deadLetters.withLockedValue { counts in
            for letter in dead { counts[letter.targetTransport, default: 1] -= 1 }
        }
        return count + dead.count
    }

    /// How many rows `queue list` shows from the shared queue at most.
    package static var listedLimit: Int { 10_000 }

    /// Queued deliveries this instance's workers hold, made eligible now; how many.
    package func retryQueued(_ sequences: [Int64]) -> Int {
        sequences.filter { sequence in self.targetTable.workers.values.contains { $0.retryNow(sequence) } }.count
    }

    /// Queued deliveries this instance's workers hold, forgotten; how many, and the
    /// sequences they did not hold.
    package func dropQueued(_ sequences: [Int64]) -> (count: Int, remaining: Set<Int64>) {
        var remaining = Set(sequences)
        for sequence in sequences where self.targetTable.workers.values.contains(where: { $0.drop(sequence) }) { remaining.remove(sequence) }
        return (sequences.count - remaining.count, remaining)
    }
}
