import BridgeState
import Foundation
import TransportCore

/// Several instances on one state (issue 26): a transport's queue taken over from the
/// shared state when this instance gets its lease, and rows other instances queued for it
/// read back when they say so (`NOTIFY`).
extension RelayPipeline {
    /// Shares the queue with other instances from now on: deliveries for transports run
    /// elsewhere stay in the shared queue only, and intake stops where a lease is lost.
    package func share(queue: any SharedQueue) {
        self.shared = SharedQueueState(queue: queue)
        self.targetTable.parked.removeAll()
    }

    /// Takes transport `name` over before its worker is added: what is queued for it and the
    /// deduplication keys it handled, from the shared state; from now on this instance's sequences
    /// sort after every one used before.
    /// Returns what a former owner may have sent of it (``InheritedDeliveries``); nil
    /// when the queue is not shared.
    @discardableResult
    package func adopt(_ name: String) async throws(StateStoreError) -> InheritedDeliveries? {
        guard let queue = self.shared?.queue else { return nil }
        self.shared?.adopting.insert(name)
        let read: (records: [QueuedDeliveryRecord], seen: [String])
        let window = self.repeats.window
        do {
            try await self.journal.startSequenceBlock()
            read = try await self.journal.read { _ throws(StateStoreError) in
                (try queue.queued(sequences: try queue.queuedSequences(transport: name)), try queue.seenDeduplicationKeys(transport: name, limit: window))
            }
        } catch {
            self.shared?.adopting.remove(name)
            throw error
        }
        var waiting = self.targetTable.parked.removeValue(forKey: name) ?? []
        waiting += read.records.compactMap(\.queued)
        var unique: Set<Int64> = []
        self.targetTable.parked[name] = waiting.filter { unique.insert($0.delivery.sequence).inserted }.sorted { $0.delivery.sequence < $1.delivery.sequence }
        self.shared?.known[name] = unique
        self.repeats.restore(read.seen, for: name)
        return InheritedDeliveries(self.targetTable.parked[name] ?? [], account: name)
    }

    /// Forgets transport `name` after its worker was removed for good here (its lease given
    /// back or lost): what it held stays in the shared queue for the next owner.
    package func disown(_ name: String) {
        self.targetTable.parked.removeValue(forKey: name)
        self.shared?.known.removeValue(forKey: name)
        self.shared?.adopting.remove(name)
        self.repeats.forget(source: name)
    }

    /// Another instance queued deliveries for transport `name`: rows its
    /// worker does not have yet are read back and handed to it. One read at a time per
    /// transport; a notice meanwhile reads once more after it.
    package func queueChanged(_ name: String) async {
        guard self.shared != nil, self.targetTable.workers[name] != nil else { return }
        guard self.shared?.reading[name] == nil else {
            self.shared?.reading[name] = true
            return
        }
        repeat {
            self.shared?.reading[name] = false
            await self.readQueue(of: name)
        } while self.shared?.reading[name] == true
        self.shared?.reading.removeValue(forKey: name)
    }

    private func readQueue(of name: String) async {
        guard let queue = self.shared?.queue else { return }
        // Everything handed to the journal so far is committed before the read (`read`
        // flushes first), so a sequence known here and missing there is done with.
        let before = self.shared?.known[name] ?? []
        do {
            let sequences = try await self.journal.read { _ throws(StateStoreError) in try queue.queuedSequences(transport: name) }
            let fresh = sequences.filter { !(self.shared?.known[name]?.contains($0) ?? false) }
            let records = try await self.journal.read { _ throws(StateStoreError) in try queue.queued(sequences: fresh) }
            guard let worker = self.targetTable.workers[name], self.shared != nil else { return }
            let handed = self.shared!.unknown(records.compactMap(\.queued), for: name)
            if !handed.isEmpty { worker.append(handed) }
            // Known from now on: what is still queued, and what was handed over meanwhile.
            let now = self.shared!.known[name] ?? []
            self.shared!.known[name] = Set(sequences).union(now.subtracting(before))
        } catch {
            self.logger.error("cannot read the shared queue", metadata: ["transport": "\(name)", "error": "\(error)"])
        }
    }

    /// Tells the other instances what a control command asks of them (``ControlNotice``);
    /// a failure is logged (the command's own part is done).
    package func announce(_ notice: ControlNotice) async {
        guard let queue = self.shared?.queue, let instance = self.leases?.instance else { return }
        do {
            try await self.journal.read { _ throws(StateStoreError) in
                for part in notice.parts { try queue.announce(part, from: instance) }
            }
        } catch {
            self.logger.warning("cannot tell the other instances", metadata: ["notice": "\(notice)", "error": "\(error)"])
        }
    }
}
