import Foundation
import GRDB
import TransportCore

/// A row of `routes`: the latest runtime change for one (channel, endpoint).
///
/// `action` is `add` (with a `direction`) or `remove` (without one); a unique index on
/// (channel, transport, address) keeps one row per member, and `id` orders the changes.
package struct RouteRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    /// The two kinds of change, as stored.
    package enum Action: String, Codable, Hashable, Sendable {
        case add
        case remove
    }

    package static let databaseTableName = "routes"

    /// Autoincremented: the order in which the changes were made.
    package var id: Int64?
    package var channel: String
    package var transport: String
    /// Nil for a local transport.
    package var address: String?
    package var action: Action
    /// Set exactly when `action` is `add`.
    package var direction: ChannelMember.Direction?
    package var changedAt: Date
    /// For a room member: its ``RoomMembership`` as JSON.
    package var room: String?

    package enum CodingKeys: String, CodingKey {
        case id
        case channel
        case transport
        case address
        case action
        case direction
        case changedAt = "changed_at"
        case room
    }

    /// Typed columns for the query interface.
    package enum Columns {
        package static let id = Column(CodingKeys.id)
        package static let channel = Column(CodingKeys.channel)
        package static let transport = Column(CodingKeys.transport)
        package static let address = Column(CodingKeys.address)
    }

    package init(_ change: RouteChange) {
        self.id = nil
        self.channel = change.channel
        self.transport = change.endpoint.transport
        self.address = change.endpoint.address
        switch change.kind {
        case .add(let direction):
            self.action = .add
            self.direction = direction
        case .remove:
            self.action = .remove
            self.direction = nil
        }
        self.changedAt = change.changedAt
        self.room = change.room.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The change this row stores. An `add` without a direction (the table's CHECK forbids
    /// it) reads as `inout` rather than trapping.
    package var change: RouteChange {
        let kind: RouteChange.Kind
        switch self.action {
        case .add: kind = .add(self.direction ?? .inout)
        case .remove: kind = .remove
        }
        return RouteChange(
            channel: self.channel,
            endpoint: Endpoint(transport: self.transport, address: self.address),
            kind: kind,
            changedAt: self.changedAt,
            room: self.room.flatMap { try? JSONDecoder().decode(RoomMembership.self, from: Data($0.utf8)) }
        )
    }

    /// The row for `channel` and `endpoint`, whatever its action (nil addresses match).
    package static func member(channel: String, endpoint: Endpoint) -> QueryInterfaceRequest<RouteRecord> {
        RouteRecord.filter(
            Columns.channel == channel
                && Columns.transport == endpoint.transport
                && Columns.address == endpoint.address
        )
    }
}
