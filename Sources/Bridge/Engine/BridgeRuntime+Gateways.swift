import BridgeState
import Foundation
import TransportCore
import XMPP

/// Gateway users linked in band (XEP-0077): stored, then merged into the running
/// configuration like a reload, so the new account starts and the router knows the link.
extension BridgeRuntime {
    /// Stores `record` and starts its account.
    package func register(_ record: GatewayRegistrationRecord) async throws(StateStoreError) {
        try self.store.saveGatewayRegistration(record)
        self.logger.notice("gateway user registered", metadata: ["gateway": "\(record.gateway)", "user": "\(record.user)", "address": "\(record.address)"])
        await self.reload()
    }

    /// Forgets `user`'s registrations (with `gateway`, else with any) and stops their
    /// accounts; how many there were.
    package func unregister(gateway: String?, user: String) async throws(StateStoreError) -> Int {
        let removed = try self.store.removeGatewayRegistrations(gateway: gateway, user: user)
        guard removed > 0 else { return 0 }
        self.logger.notice("gateway user unregistered", metadata: ["gateway": "\(gateway ?? "any")", "user": "\(user)", "registrations": "\(removed)"])
        await self.reload()
        return removed
    }

    /// Each gateway's users for `gateway users` (all gateways when `name` is nil).
    package func gatewayUsers(_ name: String?) -> [ControlResponse.GatewayUserEntry] {
        Self.gatewayUsers(self.currentConfiguration, name)
    }

    package static func gatewayUsers(_ configuration: BridgeConfiguration, _ name: String?) -> [ControlResponse.GatewayUserEntry] {
        configuration.gateways.values.filter { name == nil || $0.name == name }.sorted { $0.name < $1.name }.flatMap { gateway in
            gateway.users.sorted { $0.jid < $1.jid }.map { user in
                ControlResponse.GatewayUserEntry(
                    gateway: gateway.name, user: user.jid, account: user.account,
                    address: configuration.accounts[user.account]?.client.jid.bare.description ?? "", configured: user.configured
                )
            }
        }
    }
}
