import BridgeState
import AccountTransport
import Foundation
import GatewayComponent
import Logging
import NIOCore
import TransportCore
import XMPP

/// Links and unlinks gateway users who register in band (XEP-0077 §3): checks the
/// address and password by logging in once, then stores them (state database, mode 0600;
/// the password is never logged) and starts the account. Also fetches contacts' vCards
/// (XEP-0054) through linked accounts for their puppets.
package struct GatewayRegistrar: GatewayLinking {
    package let runtime: BridgeRuntime
    package let group: any EventLoopGroup
    package let tlsContexts: TLSContextCache
    package let blockingWork: (any BlockingWorkRunner)?
    package let logger: Logger

    package func register(gateway transport: String, user: String, address: JID, password: String) async -> Result<Void, GatewayRefusal> {
        // Off the gateway's event loop: the login's key derivation and the database write.
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            guard let gateway = await self.runtime.gateway(named: transport) else {
                return .failure(GatewayRefusal(.serviceUnavailable, "this gateway is not configured"))
            }
            let record = GatewayRegistrationRecord(gateway: gateway.name, user: user.lowercased(), address: address.bare.description, password: password, registeredAt: Date())
            guard let account = await self.runtime.currentConfiguration.registeredAccount(record) else {
                return .failure(GatewayRefusal(.jidMalformed, "not an address: \(address)"))
            }
            var check = account.client
            if let jid = try? check.jid.withResource("registration-check") { check.jid = jid }
            let client = XMPPClient(eventLoopGroup: self.group, tlsContexts: self.tlsContexts, blockingWork: self.blockingWork, logger: self.logger)
            do throws(XMPPClientError) {
                let connection = try await client.connect(configuration: check, password: password)
                await connection.close()
            } catch .authenticationFailed {
                return .failure(GatewayRefusal(.notAuthorized, "\(address.bare)'s server refused that password"))
            } catch {
                return .failure(GatewayRefusal(.remoteServerNotFound, "cannot log in as \(address.bare): \(error)"))
            }
            do {
                try await self.runtime.register(record)
            } catch {
                self.logger.error("cannot store a gateway registration", metadata: ["gateway": "\(gateway.name)", "user": "\(user)", "error": "\(error)"])
                return .failure(GatewayRefusal(.internalServerError, "the bridge cannot store the link now"))
            }
            return .success(())
        }
    }

    package func unregister(gateway transport: String, user: String) async -> Result<Void, GatewayRefusal> {
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            guard let gateway = await self.runtime.gateway(named: transport) else {
                return .failure(GatewayRefusal(.serviceUnavailable, "this gateway is not configured"))
            }
            do {
                guard try await self.runtime.unregister(gateway: gateway.name, user: user) > 0 else {
                    return .failure(GatewayRefusal(.registrationRequired, "not registered"))
                }
                return .success(())
            } catch {
                self.logger.error("cannot remove a gateway registration", metadata: ["gateway": "\(gateway.name)", "user": "\(user)", "error": "\(error)"])
                return .failure(GatewayRefusal(.internalServerError, "the bridge cannot remove the link now"))
            }
        }
    }

    package func vCard(account: String, contact: String) async -> XMLElement? {
        guard let vCards = await self.runtime.capabilities(of: account).vCards, let jid = try? JID(contact) else { return nil }
        return await vCards.vCard(of: jid)
    }

    package init(runtime: BridgeRuntime, group: any EventLoopGroup, tlsContexts: TLSContextCache, blockingWork: (any BlockingWorkRunner)? = nil, logger: Logger) {
        self.runtime = runtime
        self.group = group
        self.tlsContexts = tlsContexts
        self.blockingWork = blockingWork
        self.logger = logger
    }
}
