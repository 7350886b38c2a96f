import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// Receipts and delivery status: the parts of the pipeline that report on
/// deliveries rather than make them.
extension RelayPipeline {
    /// Which of `relayIDs` are still queued (in memory: ahead of the journal's commits),
    /// including those of a worker being removed, until they are parked.
    package func queued(among relayIDs: Set<String>) -> Set<String> {
        guard !relayIDs.isEmpty else { return [] }
        var found: Set<String> = []
        for worker in Array(self.targetTable.workers.values) + Array(self.targetTable.draining.values) {
            for item in worker.snapshot().pending where relayIDs.contains(item.delivery.relayID) { found.insert(item.delivery.relayID) }
        }
        for waiting in self.targetTable.parked.values {
            for entry in waiting where relayIDs.contains(entry.delivery.relayID) { found.insert(entry.delivery.relayID) }
        }
        return found
    }

    /// A recipient's client sent a receipt for a copy: recorded against that copy if it went to them, and
    /// told to local subscribers of its channel with the id the source knows. Receipts for
    /// copies sent into a room are ignored: any occupant could send one from the room's
    /// JID (a private message), so they prove nothing.
    package func receipt(_ receipt: DeliveryReceipt, now: Date) async {
        self.outlets.metrics.receipt(displayed: receipt.displayed)
        let record: RelayRecord?
        let id = receipt.relayID
        do {
            record = try await self.journal.read { store throws(StateStoreError) in try store.relay(id) }
        } catch {
            self.logger.error("cannot read the id map", metadata: ["error": "\(error)"])
            return
        }
        guard let record, Router.normalized(record.target) == Router.normalized(receipt.from) else {
            self.logger.debug("receipt for no copy sent to its sender", metadata: ["id": "\(receipt.relayID)", "from": "\(receipt.from)"])
            return
        }
        if self.routing.router.isRoom(Router.normalized(record.target)) {
            self.logger.debug("receipt from a room ignored", metadata: ["id": "\(receipt.relayID)", "room": "\(receipt.from)"])
            return
        }
        self.journal.record([.receipt(relayID: receipt.relayID, target: record.target, displayed: receipt.displayed, at: now)])
        var filled = receipt
        filled.channel = record.channel
        filled.source = record.source
        filled.sourceID = record.sourceID
        self.notify(.receipt(filled), from: receipt.from.transport)
        if receipt.displayed { self.displayedForPaging(relayID: receipt.relayID, from: receipt.from) }
        self.passBack(receipt, for: record)
    }
}
