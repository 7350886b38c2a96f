import Foundation
import TransportCore

/// Postponed deliveries (issue 24): over a target's `max_per_minute` (released as one
/// digest when the minute ends) or in a member's quiet hours (released as they are when
/// the hours end). Pure; the journal stores each postponement and its release.
package struct PostponedDeliveries: Sendable {
    /// One postponed delivery and when it may go.
    package struct Postponement: Hashable, Sendable {
        package var delivery: Delivery
        package var releaseAt: Date
        /// Gathered into a digest (else released as it is).
        package var flood: Bool

        package init(delivery: Delivery, releaseAt: Date, flood: Bool) {
            self.delivery = delivery
            self.releaseAt = releaseAt
            self.flood = flood
        }
    }

    package private(set) var entries: [Postponement] = []

    package init() {}

    package var count: Int { self.entries.count }

    package mutating func add(_ postponement: Postponement) {
        self.entries.append(postponement)
    }

    /// The earliest release.
    package var nextRelease: Date? { self.entries.map(\.releaseAt).min() }

    /// Takes what is due at `now`: quiet-hour deliveries in order, and each target's flood
    /// in order (one digest each).
    package mutating func due(at now: Date) -> (released: [Delivery], floods: [(target: Endpoint, deliveries: [Delivery])]) {
        let due = self.entries.filter { $0.releaseAt <= now }
        guard !due.isEmpty else { return ([], []) }
        self.entries.removeAll { $0.releaseAt <= now }
        var floods: [(target: Endpoint, deliveries: [Delivery])] = []
        for entry in due where entry.flood {
            if let index = floods.firstIndex(where: { $0.target == entry.delivery.target }) {
                floods[index].deliveries.append(entry.delivery)
            } else {
                floods.append((entry.delivery.target, [entry.delivery]))
            }
        }
        return (due.filter { !$0.flood }.map(\.delivery), floods)
    }
}
