import BridgeState
import GatewayComponent
import XMPP

/// Gateway users who registered in band (XEP-0077) join the configuration as accounts and
/// users, so the rest of the bridge treats them like configured ones.
extension BridgeConfiguration {
    /// The account name of `user`'s registered link on `gateway`: `gateway+user`, which no
    /// configured name can take (names have no `+`).
    package static func registeredAccountName(gateway: String, user: String) -> String {
        "\(gateway)+\(user.lowercased())"
    }

    /// This configuration with `registrations` as accounts and users; registrations for a
    /// gateway no longer configured, or for a user now linked in the file, are left out.
    package func merging(registrations: [GatewayRegistrationRecord]) -> BridgeConfiguration {
        var merged = self
        for record in registrations {
            guard var gateway = merged.gateways[record.gateway], !gateway.users.contains(where: { $0.jid == record.user }),
                let account = self.registeredAccount(record)
            else { continue }
            merged.accounts[account.name] = account
            gateway.users.append(GatewayUser(jid: record.user, account: account.name, configured: false))
            merged.gateways[record.gateway] = gateway
        }
        return merged
    }

    /// The account a registration links: its address and password, connecting like a
    /// configured account on the same domain (host, port, TLS and trust) when there is one,
    /// else as a client would (DNS SRV, STARTTLS, the system's trust store).
    package func registeredAccount(_ record: GatewayRegistrationRecord) -> AccountConfiguration? {
        guard let jid = try? JID(record.address), let bound = try? jid.withResource("bridge") else { return nil }
        var client = XMPPClientConfiguration(jid: bound)
        let neighbour = self.accounts.values.sorted { $0.name < $1.name }.first { $0.client.jid.domainpart == jid.domainpart && !$0.name.contains("+") }
        if let neighbour {
            client.host = neighbour.client.host
            client.port = neighbour.client.port
            client.tlsMode = neighbour.client.tlsMode
            client.tls = neighbour.client.tls
        }
        return AccountConfiguration(
            name: Self.registeredAccountName(gateway: record.gateway, user: record.user), client: client, password: .registered(record.password),
            subscriptionPolicy: .acceptKnown
        )
    }
}
