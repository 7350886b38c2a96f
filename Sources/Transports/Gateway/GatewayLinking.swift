import TransportCore
import XMPP

/// A user of a gateway: who they are on the component's server and which account's
/// contacts become their puppets.
public struct GatewayUser: Hashable, Sendable {
    /// The user's bare JID, lower-cased.
    public var jid: String
    /// The linked account's name (`[accounts.NAME]`).
    public var account: String
    /// Linked in `bridge.toml` (else registered in band).
    public var configured: Bool

    public init(jid: String, account: String, configured: Bool) {
        self.jid = jid.lowercased()
        self.account = account
        self.configured = configured
    }
}

/// What a gateway needs from the bridge: linking and unlinking accounts registered in band
/// (XEP-0077), and a contact's vCard through the linked account (XEP-0054).
public protocol GatewayLinking: Sendable {
    /// Logs in as `address` with `password`, stores the link and starts the account; the
    /// text of a refusal (wrong password, server unreachable) on failure.
    func register(gateway: String, user: String, address: JID, password: String) async -> Result<Void, GatewayRefusal>
    /// Removes `user`'s registered link and its stored credentials.
    func unregister(gateway: String, user: String) async -> Result<Void, GatewayRefusal>
    /// The vCard of `contact` as `account` sees it; nil when it has none.
    func vCard(account: String, contact: String) async -> XMLElement?
}

/// Why the bridge refused a registration, as the answer's error condition and text.
public struct GatewayRefusal: Error, Sendable, CustomStringConvertible {
    public var condition: StanzaError.Condition
    public var text: String

    public init(_ condition: StanzaError.Condition, _ text: String) {
        self.condition = condition
        self.text = text
    }

    public var description: String { "\(self.condition.rawValue): \(self.text)" }
}

/// A transport whose contacts appear as puppets for its users (a gateway): the bridge tells
/// it what the linked accounts see.
public protocol PuppetKeeping: Sendable {
    /// The gateway's users now (configured and registered).
    func setUsers(_ users: [GatewayUser]) async
    /// Shows `contact`'s presence (on the linked side) from its puppet to `user`.
    func showPresence(of contact: String, state: PresenceState, to user: String) async
    /// Offers `user` the linked account's contacts as puppets (XEP-0356 roster push where
    /// the server granted it, else XEP-0144 roster item exchange); only changes since the
    /// last offer are sent.
    func offerRoster(_ contacts: [RosterItem], to user: String) async
    /// Whether the component is connected now.
    func isConnected() async -> Bool
}
