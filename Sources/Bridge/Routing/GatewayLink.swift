import TransportCore

/// A gateway user and the account linked for them (issue 23): the user's messages to a
/// puppet go to that account's contact, and what the account's contacts send reaches the
/// user from their puppets.
struct GatewayLink: Hashable, Sendable {
    /// The gateway's transport name (`gateway.home`).
    var gateway: String
    /// The user's bare JID, lower-cased.
    var user: String
    /// The linked account's name.
    var account: String

    init(gateway: String, user: String, account: String) {
        self.gateway = gateway
        self.user = user.lowercased()
        self.account = account
    }

    /// The user as an endpoint of the gateway's transport.
    var userEndpoint: Endpoint { Endpoint(transport: self.gateway, address: self.user) }

    /// The name gateway deliveries are queued and counted under: the gateway's transport
    /// name (channel names cannot contain a dot, so no channel takes it).
    var channel: String { self.gateway }
}
