import BridgeState
import AccountTransport
import Foundation
import TransportCore
import XMPP

/// What `xmpp-bridge roster` and `xmpp-bridge status` show, from the running daemon.
extension BridgeRuntime {
    package func describe(_ request: ControlRequest) async -> ControlResponse {
        switch request.op {
        case .status:
            var response = ControlResponse(ok: true, transports: await self.status())
            if let view = await self.clusterView?() {
                response.instances = view.instances.map { .init(name: $0.name, heartbeat: $0.heartbeat, alive: $0.alive, this: $0.name == view.this) }
                let leased = Set(Self.leasedNames(self.currentConfiguration))
                for index in response.transports!.indices where leased.contains(response.transports![index].name) {
                    response.transports![index].owner = view.owners[response.transports![index].name]
                }
            } else if self.leases != nil {
                // The database out of reach: this instance's transports still, owners unknown.
                self.logger.warning("status without instances and owners: the lease rows cannot be read")
                response.instances = []
            }
            return response
        case .roster:
            guard let name = request.transport, let account = self.capabilities(of: name).roster else {
                return RouteEditor.failure("no account '\(request.transport ?? "")' (known: \(self.currentConfiguration.accounts.keys.sorted().joined(separator: ", ")))")
            }
            var entries: [ControlResponse.RosterEntry] = []
            for item in await account.rosterItems().sorted(by: { $0.jid.description < $1.jid.description }) {
                let presence = await account.contactPresence(item.jid)
                entries.append(
                    ControlResponse.RosterEntry(
                        jid: item.jid.description, name: item.name, groups: item.groups, subscription: item.subscription.rawValue,
                        pending: item.askSubscribe, availability: presence.availability.description, status: presence.status,
                        mirrored: await self.rosterMirrors?.owns(item.jid.description, account: name) ?? false
                    )
                )
            }
            return ControlResponse(ok: true, roster: entries)
        case .queueList:
            do {
                var response = ControlResponse(ok: true)
                response.queue = try await self.relay.queueEntries(transport: request.transport).map(ControlResponse.QueueEntry.init)
                return response
            } catch {
                return RouteEditor.failure("\(error)")
            }
        case .history:
            do {
                let query = request.archiveQuery
                var response = ControlResponse(ok: true)
                response.history = try await self.relay.journal.read { store throws(StateStoreError) in try store.indexedAndRead(query) }.messages
                return response
            } catch {
                return RouteEditor.failure("\(error)")
            }
        case .queueRetry, .queueDrop:
            do {
                var response = ControlResponse(ok: true)
                response.count = request.op == .queueRetry ? try await self.relay.retry(request.sequences) : try await self.relay.drop(request.sequences)
                return response
            } catch {
                return RouteEditor.failure("\(error)")
            }
        case .reconnect:
            if let name = request.transport, self.runsElsewhere(name) {
                // Run by another instance (or none now): its owner reconnects it.
                await self.relay.announce(.reconnect(transport: name))
                return ControlResponse(ok: true)
            }
            guard let name = request.transport, await self.reconnect(name) else {
                return RouteEditor.failure("no account or local transport '\(request.transport ?? "")'")
            }
            return ControlResponse(ok: true)
        case .rooms:
            var response = ControlResponse(ok: true)
            response.rooms = await self.roomEntries()
            return response
        case .omemoFingerprints, .omemoTrust, .omemoDistrust:
            return await self.omemo(request)
        case .gatewayUsers:
            var response = ControlResponse(ok: true)
            response.gatewayUsers = self.gatewayUsers(request.gateway)
            return response
        case .gatewayRemove:
            guard let user = request.address?.lowercased() else { return RouteEditor.failure("missing user") }
            let gateways = self.currentConfiguration.gateways.values.filter { request.gateway == nil || $0.name == request.gateway }
            if gateways.contains(where: { $0.users.contains { $0.jid == user && $0.configured } }) {
                return RouteEditor.failure("\(user) is linked in the configuration file; remove its [[gateway.NAME.user]] there")
            }
            do {
                let removed = try await self.unregister(gateway: request.gateway, user: user)
                guard removed > 0 else { return RouteEditor.failure("\(user) has no registration") }
                var response = ControlResponse(ok: true)
                response.count = removed
                return response
            } catch {
                return RouteEditor.failure("\(error)")
            }
        case .list, .add, .remove:
            return RouteEditor.failure("not a status request")
        }
    }

    private func status() async -> [ControlResponse.TransportStatus] {
        let rooms = Dictionary(grouping: await self.roomEntries(), by: \.account)
        let users = Dictionary(grouping: self.gatewayUsers(nil), by: { GatewayConfiguration.transportName($0.gateway) })
        return await self.transportStatuses().map { entry in
            var status = entry.status
            status.rooms = rooms[status.name]
            status.gatewayUsers = users[status.name]
            return status
        }
    }

    /// Each transport's state, queue and dead letters, by name; `reported` is false while
    /// the transport has said nothing yet (an account making its first connection).
    /// Shared by `status` and `/health/ready`.
    package func transportStatuses() async -> [(status: ControlResponse.TransportStatus, reported: Bool)] {
        let configuration = self.currentConfiguration
        let availability = await self.relay.availability
        let queues = await self.relay.queueStatus()
        let now = Date()
        let names = configuration.accounts.keys.map { ($0, "xmpp") } + configuration.locals.map { ($0.key, $0.value.kind.rawValue) }
            + configuration.gateways.values.map { ($0.transportName, "gateway") }
        return names.sorted { $0.0 < $1.0 }.map { name, kind in
            let state = availability[name]
            let queue = queues[name]
            let status = ControlResponse.TransportStatus(
                name: name, kind: kind, connected: state?.available ?? false, queued: queue?.queued ?? 0,
                lastError: state?.available == true ? nil : state?.reason,
                oldestAgeSeconds: queue?.oldest.map { now.timeIntervalSince($0) }, dead: queue?.dead ?? 0, stopped: state?.stopped ?? false
            )
            return (status, state != nil)
        }
    }

    /// `omemo fingerprints|trust|distrust` (issue 41) on the running account, whose device
    /// commits the decision; an account not running here is answered from the state.
    private func omemo(_ request: ControlRequest) async -> ControlResponse {
        let parsed: OMEMORequest
        switch OMEMORequest.parse(request, configuration: self.currentConfiguration) {
        case .success(let value): parsed = value
        case .failure(let refusal): return RouteEditor.failure(refusal.text)
        }
        guard let account = self.transports[parsed.account]?.transport as? XMPPTransport, let state = await account.omemoState() else {
            return RouteEditor.failure("\(parsed.account) is not running here, or its OMEMO device is not open yet; try again in a moment")
        }
        var response = ControlResponse(ok: true)
        guard let decision = parsed.decision else {
            response.omemo = OMEMOListing(account: parsed.account, jid: parsed.jid, state: state)
            return response
        }
        do {
            response.count = try await account.decideOMEMOTrust(decision.level, key: decision.key, for: decision.contact) ? 1 : 0
        } catch {
            return RouteEditor.failure("\(error)")
        }
        return response
    }
}
