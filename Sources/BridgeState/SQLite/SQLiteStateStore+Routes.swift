import GRDB
import TransportCore

/// Runtime routes: changes made with `xmpp-bridge route add|remove`, kept across restarts
/// and merged over the configured channels.
extension SQLiteStateStore {
    /// Every stored change, oldest first (at most one per channel and endpoint).
    package func routes() throws(StateStoreError) -> [RouteChange] {
        try self.read(.readRoutes) { db in
            try RouteRecord.order(RouteRecord.Columns.id).fetchAll(db).map(\.change)
        }
    }

    /// Records that `member` joins `channel` (replacing an earlier change for its endpoint).
    package func addRoute(channel: String, member: ChannelMember) throws(StateStoreError) {
        let change = RouteChange(
            channel: channel, endpoint: member.endpoint, kind: .add(member.direction), changedAt: self.now(), room: member.room
        )
        try self.write(.addRoute) { db in try Self.replace(change, in: db) }
    }

    /// Records that `endpoint` leaves `channel`, even if the configuration lists it
    /// (replacing an earlier change for it).
    package func removeRoute(channel: String, endpoint: Endpoint) throws(StateStoreError) {
        let change = RouteChange(channel: channel, endpoint: endpoint, kind: .remove, changedAt: self.now())
        try self.write(.removeRoute) { db in try Self.replace(change, in: db) }
    }

    /// Deletes the member's previous change and appends this one, so the newest change
    /// sorts last.
    private static func replace(_ change: RouteChange, in db: Database) throws {
        try RouteRecord.member(channel: change.channel, endpoint: change.endpoint).deleteAll(db)
        try RouteRecord(change).insert(db)
    }
}
