import Foundation
import TransportCore
import Transports

/// Operator actions on the queue (`xmpp-bridge queue list|retry|drop`). Dead letters are
/// read on the journal's thread, never on the control server's event loop.
extension RelayPipeline {
    /// Queued deliveries (from memory) and dead letters (from the database), by sequence.
    func queueEntries(transport: String?) async throws(StateStoreError) -> [QueueItemSummary] {
        var entries: [QueueItemSummary] = []
        for (name, worker) in self.workers where transport == nil || transport == name {
            entries += worker.snapshot().pending.map {
                QueueItemSummary(delivery: $0.delivery, state: .queued, attempts: $0.attempts, enqueuedAt: $0.enqueuedAt, reason: $0.lastError)
            }
        }
        for (name, waiting) in self.parked where transport == nil || transport == name {
            entries += waiting.map { QueueItemSummary(delivery: $0.delivery, state: .queued, attempts: $0.attempts, enqueuedAt: $0.enqueuedAt, reason: nil) }
        }
        entries += try await self.journal.read { store throws(StateStoreError) in try store.deadLetters(transport: transport) }.map(QueueItemSummary.init)
        return entries.sorted { $0.delivery.sequence < $1.delivery.sequence }
    }

    /// Dead letters queued anew (fresh sequences, attempts reset) and queued deliveries
    /// made eligible now; nil `sequences` retries every dead letter. Returns how many.
    func retry(_ sequences: [Int64]?) async throws -> Int {
        var count = 0
        if let sequences {
            for sequence in sequences where self.workers.values.contains(where: { $0.retryNow(sequence) }) { count += 1 }
        }
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
        self.deadLetters.withLockedValue { counts in
            for letter in dead { counts[letter.targetTransport, default: 1] -= 1 }
        }
        self.enqueue(revived)
        return count + dead.count
    }

    /// Queued deliveries and dead letters forgotten; nil `sequences` drops every dead letter.
    func drop(_ sequences: [Int64]?) async throws -> Int {
        var count = 0
        var remaining = Set(sequences ?? [])
        for sequence in sequences ?? [] where self.workers.values.contains(where: { $0.drop(sequence) }) {
            count += 1
            remaining.remove(sequence)
        }
        let dead = try await self.journal.read { store throws(StateStoreError) in try store.deadLetters() }.filter { sequences == nil || remaining.contains($0.sequence) }
        guard !dead.isEmpty else { return count }
        try await self.journal.commit(dead.map { .removeDeadLetter(sequence: $0.sequence) })
        self.deadLetters.withLockedValue { counts in
            for letter in dead { counts[letter.targetTransport, default: 1] -= 1 }
        }
        return count + dead.count
    }
}
