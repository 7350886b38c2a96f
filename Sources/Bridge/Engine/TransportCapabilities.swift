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
struct TransportCapabilities: Sendable {
    var roster: (any RosterKeeping)?
    var rooms: (any RoomKeeping)?
    var vCards: (any VCardFetching)?
    var presencePublishing: (any PresencePublishing)?
    var presenceReceiving: (any PresenceEventReceiving)?
    var textFileSharing: (any TextFileSharing)?
    var puppets: (any PuppetKeeping)?

    /// None beyond relaying (a FIFO, the HTTP ingress, a transport not running).
    static let none = TransportCapabilities()

    /// An XMPP account's.
    static func account(_ account: XMPPTransport) -> TransportCapabilities {
        TransportCapabilities(roster: account, rooms: account, vCards: account, presencePublishing: account, textFileSharing: account)
    }

    /// A gateway's.
    static func gateway(_ gateway: GatewayTransport) -> TransportCapabilities {
        TransportCapabilities(puppets: gateway)
    }

    /// A local that takes presence events (stdio, the Unix socket).
    static func presenceEvents(_ receiver: any PresenceEventReceiving) -> TransportCapabilities {
        TransportCapabilities(presenceReceiving: receiver)
    }
}
