import BridgeState
import Foundation
import TransportCore

/// The relay's side of a queue shared with other instances (issue 26): which transports
/// this instance is taking over, and which queued sequences each of its transports' workers
/// holds already, so that a row read back from the shared queue is handed over once.
struct SharedQueueState {
    let queue: any SharedQueue
    /// Transports whose queue is being read as this instance takes them over: deliveries for
    /// them are parked until their worker is added.
    var adopting: Set<String> = []
    /// Per transport run here, the sequences handed to its worker (or parked for it) that
    /// may still be queued.
    var known: [String: Set<Int64>] = [:]
    /// Per transport, a read of its queue under way (true: another was asked for meanwhile).
    var reading: [String: Bool] = [:]

    init(queue: any SharedQueue) {
        self.queue = queue
    }

    /// Of `entries` for `transport`, those its worker does not have yet, now counted as had.
    mutating func unknown(
        _ entries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)], for transport: String
    ) -> [(delivery: Delivery, enqueuedAt: Date, attempts: Int)] {
        entries.filter { self.known[transport, default: []].insert($0.delivery.sequence).inserted }
    }
}
