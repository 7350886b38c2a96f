/// What `xmpp-bridge status` shows of the instances sharing one PostgreSQL state (issue
/// 26), read from the lease rows: each instance's last heartbeat and whether it is alive
/// (heard from within `lease_ttl`), and which instance owns each leased transport now.
struct ClusterView: Sendable, Equatable {
    struct Instance: Sendable, Equatable {
        var name: String
        /// ISO 8601, UTC (the database's clock).
        var heartbeat: String
        var alive: Bool
    }

    /// The instance answering.
    var this: String
    var instances: [Instance]
    /// Leased transport → the instance whose lease on it runs.
    var owners: [String: String]
}
