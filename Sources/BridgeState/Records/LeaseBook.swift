import Logging
import NIOConcurrencyHelpers

/// What this instance may work on now (issue 26): the leases it holds, each with its
/// epoch and the moment, by this machine's monotonic clock, it stops being good here
/// (``LeaseStateMachine``). The ``LeaseKeeper`` writes it; the relay reads it at every
/// intake, before every delivery batch and in every commit (the fencing claims of
/// ``PostgresJournalScript``), from any thread.
package final class LeaseBook: Sendable {
    /// A lease this instance holds: the epoch commits carry, and the end of its use here.
    package struct Grant: Hashable, Sendable {
        package var epoch: Int64
        package var validUntil: ContinuousClock.Instant

        package init(epoch: Int64, validUntil: ContinuousClock.Instant) {
            self.epoch = epoch
            self.validUntil = validUntil
        }
    }

    /// This instance's name, the owner in its lease rows.
    package let instance: String
    package let logger: Logger
    private let state = NIOLockedValueBox<(leased: Set<String>, grants: [String: Grant])>(([], [:]))

    package init(instance: String, logger: Logger) {
        self.instance = instance
        self.logger = logger
    }

    /// The resources worked on by one instance at a time (accounts, gateways, FIFO, socket
    /// and stdio locals); the others (HTTP ingress) run on every instance.
    package var leased: Set<String> {
        get { self.state.withLockedValue { $0.leased } }
        set { self.state.withLockedValue { $0.leased = newValue } }
    }

    package func grant(_ resource: String, _ grant: Grant) {
        self.state.withLockedValue { $0.grants[resource] = grant }
    }

    package func revoke(_ resource: String) {
        self.state.withLockedValue { _ = $0.grants.removeValue(forKey: resource) }
    }

    /// Whether this instance may work on `resource` at `now`: not leased, or leased here and
    /// still good.
    package func mayWork(_ resource: String, now: ContinuousClock.Instant = .now) -> Bool {
        self.state.withLockedValue { state in
            guard state.leased.contains(resource) else { return true }
            return state.grants[resource].map { now < $0.validUntil } ?? false
        }
    }

    /// The epochs a commit touching `resources` claims, or the resources among them that
    /// are leased but no longer good here (whose entries must not be committed).
    package func claims(for resources: Set<String>, now: ContinuousClock.Instant = .now) -> (claims: [String: Int64], stale: Set<String>) {
        self.state.withLockedValue { state in
            var claims: [String: Int64] = [:]
            var stale: Set<String> = []
            for resource in resources where state.leased.contains(resource) {
                if let grant = state.grants[resource], now < grant.validUntil {
                    claims[resource] = grant.epoch
                } else {
                    stale.insert(resource)
                }
            }
            return (claims, stale)
        }
    }
}
