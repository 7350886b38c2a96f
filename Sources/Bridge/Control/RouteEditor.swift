import BridgeRelay
import BridgeState
import Foundation
import OMEMO
import TransportCore
import XMPP

/// Carries out route requests against the state database, validated against the
/// configuration: members must name a configured account (with a contact's bare JID) or
/// local transport. Used by the daemon's control socket and by `route` when no daemon runs.
package struct RouteEditor {
    package let configuration: BridgeConfiguration
    package let store: any StateStore

    package func apply(_ request: ControlRequest) -> ControlResponse {
        do {
            switch request.op {
            case .list:
                return ControlResponse(ok: true, channels: try self.listing())
            case .status:
                // Without a daemon: what the database knows.
                let now = Date()
                let accounts: [(String, String)] = self.configuration.accounts.keys.map { ($0, "xmpp") }
                let locals: [(String, String)] = self.configuration.locals.map { ($0.key, $0.value.kind.rawValue) }
                    + self.configuration.gateways.values.map { ($0.transportName, "gateway") }
                var transports: [ControlResponse.TransportStatus] = []
                for (name, kind) in (accounts + locals).sorted(by: { $0.0 < $1.0 }) {
                    let oldest: Date? = try self.store.oldestPending(transport: name)
                    transports.append(
                        ControlResponse.TransportStatus(
                            name: name, kind: kind, connected: false, queued: try self.store.pendingCount(transport: name),
                            lastError: "bridge not running", oldestAgeSeconds: oldest.map { now.timeIntervalSince($0) },
                            dead: try self.store.deadLetterCount(transport: name)
                        )
                    )
                }
                return ControlResponse(ok: true, transports: transports)
            case .roster:
                return Self.failure("no running bridge: the roster comes from the running daemon")
            case .reconnect:
                return Self.failure("no running bridge to reconnect")
            case .rooms:
                return Self.failure("no running bridge: room states come from the running daemon")
            case .gatewayUsers:
                var response = ControlResponse(ok: true)
                let merged = self.configuration.merging(registrations: try self.store.gatewayRegistrations())
                response.gatewayUsers = BridgeRuntime.gatewayUsers(merged, request.gateway)
                return response
            case .gatewayRemove:
                guard let user = request.address?.lowercased() else { return Self.failure("missing user") }
                let removed = try self.store.removeGatewayRegistrations(gateway: request.gateway, user: user)
                guard removed > 0 else { return Self.failure("\(user) has no registration") }
                var response = ControlResponse(ok: true)
                response.count = removed
                return response
            case .history:
                var response = ControlResponse(ok: true)
                response.history = try self.store.indexedAndRead(request.archiveQuery).messages
                return response
            case .queueList:
                var response = ControlResponse(ok: true)
                let queued = try self.store.loadQueue().filter { request.transport == nil || $0.targetTransport == request.transport }
                let items = queued.map(QueueItemSummary.init) + (try self.store.deadLetters(transport: request.transport).map(QueueItemSummary.init))
                response.queue = items.map(ControlResponse.QueueEntry.init)
                return response
            case .queueRetry:
                var response = ControlResponse(ok: true)
                response.count = try self.store.retryDeadLetters(request.sequences)
                return response
            case .queueDrop:
                var response = ControlResponse(ok: true)
                var count = try self.store.dropDeadLetters(request.sequences)
                for sequence in request.sequences ?? [] where try self.store.complete(sequence: sequence) { count += 1 }
                response.count = count
                return response
            case .omemoFingerprints, .omemoTrust, .omemoDistrust:
                return try self.omemo(request)
            case .add, .remove:
                guard let channel = request.channel, !channel.isEmpty else { return Self.failure("missing channel") }
                let endpoint: Endpoint
                switch self.endpoint(request) {
                case .success(let value): endpoint = value
                case .failure(let message): return Self.failure(message.text)
                }
                if request.op == .add {
                    let text = request.direction ?? "inout"
                    guard let direction = ChannelMember.Direction(rawValue: text) else {
                        return Self.failure("direction must be in, out or inout")
                    }
                    if self.configuration.locals[endpoint.transport]?.kind == .fifo, direction.receives {
                        return Self.failure("the FIFO \(endpoint.transport) is input only: use direction in")
                    }
                    var room: RoomMembership?
                    if request.room == true {
                        guard self.configuration.accounts[endpoint.transport] != nil else { return Self.failure("a room member belongs to an account: ACCOUNT:ROOM@SERVICE") }
                        if let nick = request.nick, nick.isEmpty || (try? JID(domainpart: "nick.invalid", resourcepart: nick)) == nil {
                            return Self.failure("'\(nick)' is not a valid nick (RFC 7622 resourcepart)")
                        }
                        room = RoomMembership(nick: request.nick)
                    } else if request.nick != nil {
                        return Self.failure("--nick applies only to a room (--room)")
                    }
                    try self.store.addRoute(channel: channel, member: ChannelMember(endpoint: endpoint, direction: direction, room: room))
                } else {
                    try self.store.removeRoute(channel: channel, endpoint: endpoint)
                }
                return ControlResponse(ok: true, channels: try self.listing())
            }
        } catch {
            return Self.failure("\(error)")
        }
    }

    /// `omemo fingerprints|trust|distrust` on the state, with no daemon running.
    private func omemo(_ request: ControlRequest) throws -> ControlResponse {
        let parsed: OMEMORequest
        switch OMEMORequest.parse(request, configuration: self.configuration) {
        case .success(let value): parsed = value
        case .failure(let refusal): return Self.failure(refusal.text)
        }
        guard let state = try self.store.omemoState(account: parsed.account) else {
            return Self.failure("\(parsed.account) has no OMEMO device yet: it is made when the bridge first runs with omemo = true")
        }
        var response = ControlResponse(ok: true)
        if let decision = parsed.decision {
            var trust = OMEMOTrust(policy: self.configuration.accounts[parsed.account]?.omemoTrust ?? .blind, levels: state.trust)
            let change = trust.decide(decision.level, decision.key, for: decision.contact)
            if let change { try self.store.saveOMEMO([change], account: parsed.account) }
            response.count = change == nil ? 0 : 1
        } else {
            response.omemo = OMEMOListing(account: parsed.account, jid: parsed.jid, state: state)
        }
        return response
    }

    private struct Message: Error {
        let text: String
    }

    private func endpoint(_ request: ControlRequest) -> Result<Endpoint, Message> {
        guard let transport = request.transport, !transport.isEmpty else { return .failure(Message(text: "missing member")) }
        if self.configuration.accounts[transport] != nil {
            guard let address = request.address, let jid = try? JID(address), jid.isBare, jid.localpart != nil else {
                return .failure(Message(text: "an account member needs a contact's or room's bare JID, e.g. \(transport):alice@example.org"))
            }
            return .success(Endpoint(transport: transport, address: jid.description.lowercased()))
        }
        if self.configuration.locals[transport] != nil {
            guard request.address == nil else { return .failure(Message(text: "the local transport \(transport) takes no address")) }
            return .success(Endpoint(transport: transport))
        }
        let known = (self.configuration.accounts.keys.sorted() + self.configuration.locals.keys.sorted()).joined(separator: ", ")
        return .failure(Message(text: "unknown account or local '\(transport)' (known: \(known))"))
    }

    private func listing() throws -> [ControlResponse.ChannelEntry] {
        try self.store.applyRoutes(to: self.configuration.channels).map { channel in
            ControlResponse.ChannelEntry(
                name: channel.name,
                members: channel.members.map {
                    ControlResponse.Member(
                        transport: $0.endpoint.transport, address: $0.endpoint.address, direction: $0.direction.rawValue,
                        room: $0.room == nil ? nil : true, nick: $0.room?.nick
                    )
                }
            )
        }
    }

    package static func failure(_ message: String) -> ControlResponse {
        ControlResponse(ok: false, error: message, channels: nil, roster: nil, transports: nil)
    }

    package init(configuration: BridgeConfiguration, store: any StateStore) {
        self.configuration = configuration
        self.store = store
    }
}
