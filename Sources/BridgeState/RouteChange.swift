import Foundation
import TransportCore

/// One runtime change to the routing table (`xmpp-bridge route add|remove`), merged over
/// the channels from the configuration when the daemon starts or reloads.
///
/// The store keeps only the latest change per (channel, endpoint): adding a member that was
/// removed replaces the removal, and removing an added member replaces the addition.
package struct RouteChange: Hashable, Sendable {
    /// What happened to the member.
    package enum Kind: Hashable, Sendable {
        /// The endpoint joins the channel with this direction (or takes it, if already a member).
        case add(ChannelMember.Direction)
        /// The endpoint leaves the channel, even if the configuration lists it.
        case remove
    }

    package var channel: String
    package var endpoint: Endpoint
    package var kind: Kind
    package var changedAt: Date
    /// For an added room (XEP-0045): its nick and password source.
    package var room: RoomMembership?

    package init(channel: String, endpoint: Endpoint, kind: Kind, changedAt: Date, room: RoomMembership? = nil) {
        self.channel = channel
        self.endpoint = endpoint
        self.kind = kind
        self.changedAt = changedAt
        self.room = room
    }

    /// Applies `changes` in order over `channels` and returns the routing table in effect.
    ///
    /// - An added endpoint joins its channel; if it is already a member, its direction is
    ///   replaced. A channel the configuration does not know is created, with
    ///   `RelayChannel.defaultFormat` and `chat` delivery, after the configured ones.
    /// - A removed endpoint is taken out of its channel. The channel stays, even if empty;
    ///   a removal from an unknown channel changes nothing.
    package static func apply(_ changes: [RouteChange], to channels: [RelayChannel]) -> [RelayChannel] {
        var result = channels
        for change in changes {
            let index = result.firstIndex { $0.name == change.channel }
            switch change.kind {
            case .add(let direction):
                let member = ChannelMember(endpoint: change.endpoint, direction: direction, room: change.room)
                guard let index else {
                    result.append(RelayChannel(name: change.channel, members: [member]))
                    continue
                }
                if let existing = result[index].members.firstIndex(where: { $0.endpoint == change.endpoint }) {
                    result[index].members[existing].direction = direction
                    if let room = change.room { result[index].members[existing].room = room }
                } else {
                    result[index].members.append(member)
                }
            case .remove:
                guard let index else { continue }
                result[index].members.removeAll { $0.endpoint == change.endpoint }
            }
        }
        return result
    }
}
