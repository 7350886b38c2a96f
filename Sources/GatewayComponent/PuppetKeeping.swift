import TransportCore
import XMPP

/// A transport whose contacts appear as puppets for its users (a gateway, XEP-0100): the
/// bridge tells it what the linked accounts see (presence, RFC 6121 §4; rosters, XEP-0144,
/// XEP-0356).
public protocol PuppetKeeping: Sendable {
    /// The gateway's users now (configured and registered).
    func setUsers(_ users: [GatewayUser]) async
    /// Shows `contact`'s presence (on the linked side) from its puppet to `user`.
    func showPresence(of contact: String, state: PresenceState, to user: String) async
    /// Offers `user` the linked account's contacts as puppets (XEP-0356 roster push where
    /// the server granted it, else XEP-0144 roster item exchange); only changes since the
    /// last offer are sent.
    func offerRoster(_ contacts: [RosterItem], to user: String) async
    /// Asks `user`, from `contact`'s puppet, to let the contact see her presence (the
    /// contact asked the linked account, RFC 6121 §3.1).
    func askSubscription(from contact: String, to user: String) async
    /// Whether the component is connected now.
    func isConnected() async -> Bool
}
