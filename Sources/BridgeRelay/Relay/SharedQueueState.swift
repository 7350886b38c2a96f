import BridgeState
import Foundation
import TransportCore

/// The relay's side of a queue shared with other instances (issue 26): which transports
/// this instance is taking over, and which queued sequences each of its transports' workers
/// holds already, so that a row read back from the shared queue is handed over once.
package struct SharedQueueState {
    package let queue: any SharedQueue
    /// Transports whose queue is being read as this instance takes them over: deliveries for
    /// them are parked until their worker is added.
    package var adopting: Set<String> = []
    /// Per transport run here, the sequences handed to its worker (or parked for it) that
    /// may still be queued.
    package var known: [String: Set<Int64>] = [:]
    /// Per transport, a read of its queue under way (true: another was asked for meanwhile).
    package var reading: [String: Bool] = [:]

    package init(queue: any SharedQueue) {
        self.queue = queue
    }

    /// Of `entries` for `transport`, those its worker does not have yet, now counted as had.
    package mutating func unknown(
        _ entries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)], for transport: String
    ) -> [(delivery: Delivery, enqueuedAt: Date, attempts: Int)] {
        entries.filter { self.known[transport, default: []].insert($0.delivery.sequence).inserted }
    }
}
