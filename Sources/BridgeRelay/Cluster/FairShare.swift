/// How many leases one instance may hold (issue 26): its fair share of the leased
/// resources among the live instances (those with a recent heartbeat), rounded up, plus
/// one, slack before it gives any back. The share of an instance that died is taken up by
/// the others; with few resources one instance may keep them all (3 over 2 instances: 3).
package enum FairShare {
    /// The most leases of `resources` one of `liveInstances` (0 counts as 1) may hold.
    package static func limit(resources: Int, liveInstances: Int) -> Int {
        guard resources > 0 else { return 0 }
        let live = max(liveInstances, 1)
        return min(resources, (resources + live - 1) / live + 1)
    }
}
