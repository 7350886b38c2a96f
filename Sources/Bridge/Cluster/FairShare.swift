/// How many leases one instance may hold (issue 26): its fair share of the leased
/// resources among the live instances (those with a recent heartbeat), rounded up, plus
/// one. A newcomer so finds work left for it, and the share of an instance that died is
/// taken up by the others.
enum FairShare {
    static func limit(resources: Int, liveInstances: Int) -> Int {
        guard resources > 0 else { return 0 }
        let live = max(liveInstances, 1)
        return min(resources, (resources + live - 1) / live + 1)
    }
}
