import Foundation
import TransportCore

/// Deliveries held back (issue 24): over a target's `max_per_minute` (released as one
/// digest when the minute ends) or in a member's quiet hours (released as they are when
/// the hours end). Pure; the journal stores each hold and its release.
struct HeldDeliveries: Sendable {
    struct Hold: Hashable, Sendable {
        var delivery: Delivery
        var releaseAt: Date
        /// Gathered into a digest (else released as it is).
        var flood: Bool
    }

    private(set) var holds: [Hold] = []

    var isEmpty: Bool { self.holds.isEmpty }
    var count: Int { self.holds.count }

    mutating func add(_ hold: Hold) {
        self.holds.append(hold)
    }

    /// The earliest release.
    var nextRelease: Date? { self.holds.map(\.releaseAt).min() }

    /// Takes what is due at `now`: quiet-hour deliveries in order, and each target's flood
    /// in order (one digest each).
    mutating func due(at now: Date) -> (released: [Delivery], floods: [(target: Endpoint, deliveries: [Delivery])]) {
        let due = self.holds.filter { $0.releaseAt <= now }
        guard !due.isEmpty else { return ([], []) }
        self.holds.removeAll { $0.releaseAt <= now }
        var floods: [(target: Endpoint, deliveries: [Delivery])] = []
        for hold in due where hold.flood {
            if let index = floods.firstIndex(where: { $0.target == hold.delivery.target }) {
                floods[index].deliveries.append(hold.delivery)
            } else {
                floods.append((hold.delivery.target, [hold.delivery]))
            }
        }
        return (due.filter { !$0.flood }.map(\.delivery), floods)
    }
}
