import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TransportCore
import XMPP
import XMPPMapping

/// Gateway mode: an XMPP component (XEP-0114) whose puppets stand for the contacts of
/// linked accounts (XEP-0100 style). Its endpoints are its users (`gateway.home` +
/// `alice@work.example`): a message from a user to a puppet becomes an
/// ``InboundMessage`` whose ``InboundMessage/addressee`` is the contact; a delivery to a
/// user goes out from the puppet of the delivery's source (its address on the linked
/// account).
///
/// Deliveries count as delivered once the server answered a ping written after them (the
/// stream has no stream management); a ledger records what was handed over, so a restart
/// does not send it twice (see ``ComponentConnection``).
public final class GatewayTransport: Transport, PuppetKeeping {
    public let name: String
    let directory: GatewayDirectory
    let component: ComponentConnection<EventLoopClock>
    let handler: any TransportEventHandler
    let linking: (any GatewayLinking)?
    let bridgeID: String
    let domain: JID
    /// The server's own domain: privileges come from it (XEP-0356 §4).
    let serverDomain: JID
    let logger: Logger
    public let executor: (any TaskExecutor)?
    let state: NIOLockedValueBox<State>
    /// Requests answered off the reading path (registration, vCards), in order; at most
    /// ``maximumSlowRequests`` wait, the rest get `resource-constraint`.
    let slowRequests = AsyncStream.makeStream(of: GatewayDirectory.Answer.self, bufferingPolicy: .bufferingOldest(GatewayTransport.maximumSlowRequests))
    static var maximumSlowRequests: Int { 64 }
    /// What each user stood offered when the roster privilege came late: written beside
    /// the reading path (the pushes' answers are read there).
    let lateRosterWrites = AsyncStream.makeStream(of: [String: [RosterOffer.Item]].self)

    /// What the transport keeps between stanzas.
    struct State {
        var users: [String: GatewayUser] = [:]
        /// Each user's resources and their presence, for the aggregate the bridge sees.
        var userResources: [String: [String: PresenceState]] = [:]
        /// The presence each puppet last showed to each user, for probes (RFC 6121 §4.3).
        var shown: [String: [String: PresenceState]] = [:]
        var offer: RosterOffer
        /// The server let us write users' rosters (XEP-0356 `roster` set or both).
        var rosterPrivilege = false
    }

    public init(
        name: String, component: XMPPComponentClient.Configuration, secret: String, serverDomain: JID, displayName: String?,
        registration: RegistrationPolicy, allow: [String], handler: any TransportEventHandler, linking: (any GatewayLinking)?, bridgeID: String,
        ledger: (any StreamPositionLedger)?, keepalive: Duration = .seconds(60), requestTimeout: Duration = .seconds(30),
        eventLoop: any EventLoop, logger: Logger
    ) throws(XMPPClientError) {
        do {
            self.domain = try JID(component.domain)
        } catch {
            throw .configuration("component domain \(component.domain): \(error)")
        }
        self.name = name
        self.serverDomain = serverDomain
        self.directory = GatewayDirectory(domain: component.domain, name: displayName, registration: registration, allow: allow)
        self.handler = handler
        self.linking = linking
        self.bridgeID = bridgeID
        var logger = logger
        logger[metadataKey: "gateway"] = "\(name)"
        self.logger = logger
        self.executor = EventLoopTaskExecutor(eventLoop)
        var random = SystemRandomNumberGenerator()
        self.component = ComponentConnection(
            configuration: component, secret: secret, client: XMPPComponentClient(eventLoopGroup: eventLoop, logger: logger), reconnect: .init(),
            clock: EventLoopClock(eventLoop), keepalive: keepalive, requestTimeout: requestTimeout, serverDomain: serverDomain,
            ids: StanzaIDGenerator(prefix: "gw-\(String(random.next() % 1_000_000_000, radix: 36))"), ledger: ledger, logger: logger
        )
        self.state = NIOLockedValueBox(State(offer: RosterOffer(puppets: self.directory.puppets, defaultGroup: displayName ?? component.domain)))
    }

    public func run() async throws {
        await withTaskExecutorPreference(self.executor) {
            let component = self.component
            await withTaskGroup(of: Void.self) { group in
                // Registrations and vCards wait for the network: beside the reading, one
                // at a time, so ping answers (the round trips) are read meanwhile.
                group.addTask { for await request in self.slowRequests.stream { await self.answer(request) } }
                group.addTask { for await offered in self.lateRosterWrites.stream { await self.writeOffered(offered) } }
                await withGracefulShutdownHandler {
                    await component.run(
                        ComponentConnection.Callbacks(
                            online: { await self.online() },
                            element: { await self.receive($0) },
                            offline: { error in await self.handler.handle(.unavailable(reason: error.map { "\($0)" }), from: self.name) },
                            stopped: { error in await self.handler.handle(.stopped(reason: "\(error)"), from: self.name) }
                        )
                    )
                } onGracefulShutdown: {
                    Task { await component.stop() }
                }
                self.slowRequests.continuation.finish()
                self.lateRosterWrites.continuation.finish()
            }
        }
    }

    public func stop() async {
        await self.component.stop()
    }

    private func online() async {
        self.state.withLockedValue { state in
            // A new connection: offers and privileges start afresh.
            for user in state.users.keys { state.offer.forget(user) }
            state.rosterPrivilege = false
        }
        await self.handler.handle(.available, from: self.name)
    }

    // MARK: PuppetKeeping

    public func setUsers(_ users: [GatewayUser]) async {
        self.state.withLockedValue { state in
            let wanted = Dictionary(users.map { ($0.jid, $0) }, uniquingKeysWith: { first, _ in first })
            for gone in state.users.keys where wanted[gone] == nil {
                state.offer.forget(gone)
                state.shown[gone] = nil
            }
            state.users = wanted
        }
    }

    public func askSubscription(from contact: String, to user: String) async {
        guard let puppet = self.directory.puppets.puppet(for: contact), let to = try? JID(user) else { return }
        var subscribe = Presence(type: .subscribe, to: to)
        subscribe.header.from = puppet
        try? await self.component.send([subscribe.element])
    }

    public func isConnected() async -> Bool {
        await self.component.isConnected
    }

    public func showPresence(of contact: String, state: PresenceState, to user: String) async {
        guard let puppet = self.directory.puppets.puppet(for: contact), let to = try? JID(user) else { return }
        self.state.withLockedValue { $0.shown[user.lowercased(), default: [:]][contact.lowercased()] = state }
        try? await self.component.send([Self.presence(state, from: puppet, to: to)])
    }

    /// How long a privileged roster push (XEP-0356) may go unanswered before the privilege
    /// counts as unusable: a server answers one at once, and the relay waits meanwhile.
    static let rosterPushTimeout: Duration = .seconds(5)

    public func offerRoster(_ contacts: [RosterItem], to user: String) async {
        guard let to = try? JID(user) else { return }
        let (changes, privileged) = self.state.withLockedValue { state in (state.offer.changes(for: user.lowercased(), contacts: contacts), state.rosterPrivilege) }
        guard !changes.add.isEmpty || !changes.remove.isEmpty else { return }
        if privileged {
            await self.write(changes.add, remove: changes.remove, to: to, user: user)
        } else {
            await self.suggest(to: to, user: user, add: changes.add, remove: changes.remove)
        }
    }

    /// Writes what each user stood offered as suggestions before the privilege came, while
    /// the privilege holds (a refused push ends it).
    private func writeOffered(_ offered: [String: [RosterOffer.Item]]) async {
        for (user, items) in offered.sorted(by: { $0.key < $1.key }) where !items.isEmpty {
            guard self.state.withLockedValue(\.rosterPrivilege), let to = try? JID(user) else { continue }
            await self.write(items, remove: [], to: to, user: user)
        }
    }

    /// Writes the puppets into `user`'s roster with privileged roster pushes (XEP-0356 §5);
    /// a server that refuses them gets suggestions (XEP-0144), from now on.
    func write(_ add: [RosterOffer.Item], remove: [JID], to: JID, user: String) async {
        self.logger.info("writing puppets into the user's roster (XEP-0356)", metadata: ["user": "\(user)", "add": "\(add.count)", "remove": "\(remove.count)"])
        for push in RosterOffer.rosterPushes(from: self.domain, to: to, add: add, remove: remove) {
            do {
                _ = try await self.component.request(push, timeout: Self.rosterPushTimeout)
            } catch let error as ComponentConnection<EventLoopClock>.LinkError where error.privilegeUnusable {
                // ejabberd before 23.10 grants the privilege but fails every push (its
                // issue #3942); 24.12 answers none: suggest instead, from now on.
                self.logger.notice("roster push refused or not answered; suggesting puppets instead (XEP-0144)", metadata: ["user": "\(user)", "error": "\(error)"])
                self.state.withLockedValue { $0.rosterPrivilege = false }
                await self.suggest(to: to, user: user, add: add, remove: remove)
                return
            } catch {
                // The link went: everything is offered afresh on the next connection.
                self.logger.info("roster push not answered", metadata: ["user": "\(user)", "error": "\(error)"])
                return
            }
        }
    }

    /// Sends XEP-0144 suggestions; what could not be sent is offered whole next time.
    private func suggest(to: JID, user: String, add: [RosterOffer.Item], remove: [JID]) async {
        self.logger.info("suggesting puppets to the user (XEP-0144)", metadata: ["user": "\(user)", "add": "\(add.count)", "remove": "\(remove.count)"])
        do {
            try await self.component.send(RosterOffer.exchangeMessages(from: self.domain, to: to, add: add, remove: remove))
        } catch {
            self.state.withLockedValue { $0.offer.forget(user.lowercased()) }
            self.logger.info("roster suggestion not sent", metadata: ["user": "\(user)", "error": "\(error)"])
        }
    }

    /// `state` shown from `puppet` to `user` (RFC 6121 §4.7), with the contact's avatar hash
    /// when it has one (XEP-0153 §3.2; the puppet serves the vCard it stands for).
    static func presence(_ state: PresenceState, from puppet: JID, to user: JID) -> XMLElement {
        var presence = state.availability == .unavailable
            ? Presence(type: .unavailable, to: user, status: state.status)
            : Presence(to: user, show: StanzaMapping.show(state.availability), status: state.status)
        presence.header.from = puppet
        if let avatar = state.avatar, state.availability != .unavailable { presence.extensions.append(PhotoUpdate.element(hash: avatar)) }
        return presence.element
    }

    // MARK: Delivery

    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        await self.deliver(deliveries, written: {})
    }

    /// Writes the batch from its puppets, calls `written`, then waits for the server's
    /// answer to a ping written after it.
    public func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult] {
        var results = [DeliveryResult?](repeating: nil, count: deliveries.count)
        var messages: [(id: String, element: XMLElement, bytes: Int)] = []
        var indices: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            guard let address = delivery.target.address, let user = try? JID(address) else {
                results[index] = .failed("not a JID: \(delivery.target.address ?? "(none)")")
                continue
            }
            guard let contact = delivery.source.address, let puppet = self.directory.puppets.puppet(for: contact) else {
                results[index] = .failed("no puppet for \(delivery.source)")
                continue
            }
            let type = StanzaMapping.messageKind(delivery.type)
            let content = RichContent(delivery.content)
            let (body, elements) = content.outgoing(text: delivery.body.isEmpty ? nil : delivery.body)
            var message = Message(type: type, to: user, id: delivery.relayID, body: body, subject: delivery.subject)
            message.header.from = puppet
            message.extensions.append(RelayMarker.element(bridgeID: self.bridgeID))
            message.extensions.append(OriginID.element(delivery.relayID))
            message.extensions += elements
            if type == .chat || type == .normal, content.mayAskReceipt(body: body), delivery.asksReceipt {
                message.extensions += MessageReceipt.requests
            }
            // Its size with its ping, near enough for chunking: the text, and the envelope
            // (addresses, ids, relay marker, receipt request: about 500 bytes; the ping 150).
            messages.append((delivery.relayID, message.element, (body?.utf8.count ?? 0) + 650))
            indices.append(index)
        }
        guard !messages.isEmpty else {
            written()
            return results.map { $0 ?? .failed("not attempted") }
        }
        let (answered, error) = await self.component.sendWithRoundTrips(messages, written: written)
        for (position, index) in indices.enumerated() {
            results[index] = position < answered ? .delivered : .retryLater(error.map { "\($0)" } ?? "no round trip")
        }
        return results.map { $0 ?? .failed("not attempted") }
    }
}
