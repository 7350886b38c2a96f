/// What `xmpp-bridge status` shows of the instances sharing one PostgreSQL state (issue
/// 26), read from the lease rows: each instance's last heartbeat and whether it is alive
/// (heard from within `lease_ttl`), and which instance owns each leased transport now.
package struct ClusterView: Sendable, Equatable {
    package struct Instance: Sendable, Equatable {
        package var name: String
        /// ISO 8601, UTC (the database's clock).
        package var heartbeat: String
        package var alive: Bool

        package init(name: String, heartbeat: String, alive: Bool) {
            self.name = name
            self.heartbeat = heartbeat
            self.alive = alive
        }
    }

    /// The instance answering.
    package var this: String
    package var instances: [Instance]
    /// Leased transport → the instance whose lease on it runs.
    package var owners: [String: String]

    package init(this: String, instances: [Instance], owners: [String: String]) {
        self.this = this
        self.instances = instances
        self.owners = owners
    }
}
