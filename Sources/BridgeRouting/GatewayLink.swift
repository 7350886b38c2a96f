import TransportCore

/// A gateway user and the account linked for them (issue 23): the user's messages to a
/// puppet go to that account's contact, and what the account's contacts send reaches the
/// user from their puppets.
package struct GatewayLink: Hashable, Sendable {
    /// The gateway's transport name (`gateway.home`).
    package var gateway: String
    /// The user's bare JID, lower-cased.
    package var user: String
    /// The linked account's name.
    package var account: String

    package init(gateway: String, user: String, account: String) {
        self.gateway = gateway
        self.user = user.lowercased()
        self.account = account
    }

    /// The user as an endpoint of the gateway's transport.
    package var userEndpoint: Endpoint { Endpoint(transport: self.gateway, address: self.user) }

    /// The name gateway deliveries are queued and counted under: the gateway's transport
    /// name (channel names cannot contain a dot, so no channel takes it).
    package var channel: String { self.gateway }
}
