import Foundation
import TransportCore

/// The durable outbound queue (issue 4, issue 26): deliveries waiting for their targets, in order, each with a sequence never reused.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol DeliveryQueueStore: AnyObject, Sendable {
    /// Stores `deliveries` in one transaction, with their relay ids, and returns them in the
    /// same order with `sequence` set (increasing, never reused).
    func enqueue(_ deliveries: [Delivery]) throws(StateStoreError) -> [Delivery]
    /// The oldest `limit` deliveries waiting for `transport`, in queue order.
    func pending(transport: String, limit: Int) throws(StateStoreError) -> [Delivery]
    /// Removes a delivered (or permanently failed) delivery; false if it was not queued.
    @discardableResult func complete(sequence: Int64) throws(StateStoreError) -> Bool
    /// Removes several delivered deliveries in one transaction.
    func complete(sequences: [Int64]) throws(StateStoreError)
    /// Removes `transport`'s deliveries its server acknowledged before a restart (their ids
    /// from the stream ledger); with `firstAttemptsOnly`, only deliveries never tried again
    /// (a retried one may have bounced after its acknowledgement).
    func completeAcknowledged(transport: String, relayIDs: [String], firstAttemptsOnly: Bool) throws(StateStoreError)
    /// How many deliveries wait for `transport`, or for every transport when nil.
    func pendingCount(transport: String?) throws(StateStoreError) -> Int
    /// The transports with deliveries waiting, sorted by name.
    func allPendingTransports() throws(StateStoreError) -> [String]
    /// Every queued delivery with its attempts and enqueue time, in queue order.
    func loadQueue() throws(StateStoreError) -> [QueuedDeliveryRecord]
    /// The enqueue time of the oldest delivery waiting for `transport`.
    func oldestPending(transport: String) throws(StateStoreError) -> Date?
}

extension DeliveryQueueStore {
    package func completeAcknowledged(transport: String, relayIDs: [String]) throws(StateStoreError) {
        try self.completeAcknowledged(transport: transport, relayIDs: relayIDs, firstAttemptsOnly: true)
    }
}
