import AccountTransport
import GatewayComponent
import LocalTransport
import TransportCore

/// What a transport can do beyond relaying (``Transport``), each ability typed and taken
/// from the concrete transport when ``TransportFactory`` builds it: the bridge asks for
/// an ability by transport name and never downcasts a transport to learn what it can do.
/// An XMPP account keeps a roster (RFC 6121 §2) and rooms (XEP-0045), publishes presence,
/// serves contacts' vCards (XEP-0054) and shares text as files (XEP-0363); a gateway keeps
/// puppets (XEP-0100); the stdio and socket locals take presence events.
package struct TransportCapabilities: Sendable {
    package var roster: (any RosterKeeping)?
    package var rooms: (any RoomKeeping)?
    package var vCards: (any VCardFetching)?
    package var presencePublishing: (any PresencePublishing)?
    package var presenceReceiving: (any PresenceEventReceiving)?
    package var textFileSharing: (any TextFileSharing)?
    package var puppets: (any PuppetKeeping)?

    /// None beyond relaying (a FIFO, the HTTP ingress, a transport not running).
    package static let none = TransportCapabilities()

    /// An XMPP account's.
    package static func account(_ account: XMPPTransport) -> TransportCapabilities {
        TransportCapabilities(roster: account, rooms: account, vCards: account, presencePublishing: account, textFileSharing: account)
    }

    /// A gateway's.
    package static func gateway(_ gateway: GatewayTransport) -> TransportCapabilities {
        TransportCapabilities(puppets: gateway)
    }

    /// A local that takes presence events (stdio, the Unix socket).
    package static func presenceEvents(_ receiver: any PresenceEventReceiving) -> TransportCapabilities {
        TransportCapabilities(presenceReceiving: receiver)
    }

    package init(roster: (any RosterKeeping)? = nil, rooms: (any RoomKeeping)? = nil, vCards: (any VCardFetching)? = nil, presencePublishing: (any PresencePublishing)? = nil, presenceReceiving: (any PresenceEventReceiving)? = nil, textFileSharing: (any TextFileSharing)? = nil, puppets: (any PuppetKeeping)? = nil) {
        self.roster = roster
        self.rooms = rooms
        self.vCards = vCards
        self.presencePublishing = presencePublishing
        self.presenceReceiving = presenceReceiving
        self.textFileSharing = textFileSharing
        self.puppets = puppets
    }
}
