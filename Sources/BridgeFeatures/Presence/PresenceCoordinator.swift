import BridgeRouting
import Logging
import TransportCore

/// Runs the ``PresenceRelay`` for the running bridge: feeds it the transports' presence
/// events, publishes what it decides on the bridge's accounts, keeps its coalescing timers,
/// and passes presence events to local transports (RFC 6121 §4; issue: presence relay).
package actor PresenceCoordinator<C: Clock>: TransportEventHandler where C.Duration == Duration, C.Instant: Sendable {
    private var relay: PresenceRelay<C>
    private let clock: C
    private var accounts: Set<String>
    private let capabilities: @Sendable (String) async -> TransportCapabilities
    private let logger: Logger
    private var timers: [String: Task<Void, Never>] = [:]
    /// Per account: a publish under way, and the latest state waiting behind it, so
    /// publishes go out in order even though this actor is reentrant.
    private var publishing: Set<String> = []
    private var waiting: [String: PresenceState] = [:]
    /// Room → the (channel, local transport) pairs shown its occupants' comings and goings.
    private var occupantTargets: [Endpoint: [(channel: String, transport: String)]]
    /// Channel → its local members (any direction), told about receipts.
    private var channelLocals: [String: [String]]

    package init(
        settings: PresenceSettings, channels: [RelayChannel], capabilities: @escaping @Sendable (String) async -> TransportCapabilities, clock: C,
        logger: Logger
    ) {
        self.clock = clock
        let accounts = settings.accounts
        self.accounts = accounts
        self.relay = PresenceRelay(
            channels: channels, presenceChannels: settings.presenceChannels, accounts: accounts,
            mirrors: settings.mirrors.map { (from: $0.from, to: $0.to) }, interval: settings.interval, ownJIDs: settings.ownJIDs
        )
        self.capabilities = capabilities
        self.logger = logger
        self.occupantTargets = Self.occupantTargets(channels, accounts: accounts)
        self.channelLocals = Self.channelLocals(channels, accounts: accounts)
    }

    package static func channelLocals(_ channels: [RelayChannel], accounts: Set<String>) -> [String: [String]] {
        var locals: [String: [String]] = [:]
        for channel in channels {
            locals[channel.name] = channel.members.map(\.endpoint.transport).filter { !accounts.contains($0) }
        }
        return locals
    }

    /// For each room member: the local transports that receive in its channels.
    package static func occupantTargets(_ channels: [RelayChannel], accounts: Set<String>) -> [Endpoint: [(channel: String, transport: String)]] {
        var targets: [Endpoint: [(channel: String, transport: String)]] = [:]
        for channel in channels {
            let locals = channel.members.filter { !accounts.contains($0.endpoint.transport) && $0.direction.receives }.map(\.endpoint.transport)
            for member in channel.members where member.room != nil {
                targets[Router.normalized(member.endpoint), default: []] += locals.map { (channel.name, $0) }
            }
        }
        return targets
    }

    package nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.process(event, from: transport)
        return .accepted
    }

    private func process(_ event: TransportEvent, from transport: String) async {
        let now = self.clock.now
        switch event {
        case .presence(let contact, let nick, let state):
            await self.run(self.relay.contactChanged(contact, nick: nick, state: state, now: now))
        case .ownPresence(let state):
            await self.run(self.relay.ownPresenceChanged(account: transport, state: state, now: now))
        case .available where self.accounts.contains(transport):
            await self.run(self.relay.accountOnline(account: transport, now: now))
        case .unavailable where self.accounts.contains(transport):
            await self.run(self.relay.accountOffline(account: transport, now: now))
        case .occupant(let room, let nick, let joined):
            for target in self.occupantTargets[Router.normalized(room)] ?? [] {
                guard let receiver = await self.capabilities(target.transport).presenceReceiving else { continue }
                await receiver.receiveOccupant(channel: target.channel, room: room, nick: nick, joined: joined)
            }
        case .receipt(let receipt):
            for transport in receipt.channel.flatMap({ self.channelLocals[$0] }) ?? [] {
                guard let receiver = await self.capabilities(transport).presenceReceiving else { continue }
                await receiver.receiveReceipt(receipt)
            }
        case .alertAcked(let ack, let channel, _, let id):
            for transport in self.channelLocals[channel] ?? [] {
                guard let receiver = await self.capabilities(transport).presenceReceiving else { continue }
                await receiver.receiveAlertAck(ack, channel: channel, id: id)
            }
        case .available, .unavailable, .message, .inputFinished, .rosterChanged, .stopped, .bounced, .acknowledgedBeforeRestart, .resumePointMoved, .targetReady, .copyStanzaID,
            .subscriptionRequest, .subscriptionApproved:
            return
        }
    }

    /// Applies a reloaded configuration or changed routes.
    package func update(settings: PresenceSettings, channels: [RelayChannel]) async {
        self.accounts = settings.accounts
        self.occupantTargets = Self.occupantTargets(channels, accounts: self.accounts)
        self.channelLocals = Self.channelLocals(channels, accounts: self.accounts)
        let actions = self.relay.update(
            channels: channels, presenceChannels: settings.presenceChannels, accounts: self.accounts,
            mirrors: settings.mirrors.map { (from: $0.from, to: $0.to) }, ownJIDs: settings.ownJIDs,
            now: self.clock.now
        )
        await self.run(actions)
    }

    private func publish(_ state: PresenceState, on account: String) async {
        guard self.publishing.insert(account).inserted else {
            self.waiting[account] = state
            return
        }
        var next: PresenceState? = state
        while let current = next {
            if let publisher = await self.capabilities(account).presencePublishing {
                self.logger.debug("presence", metadata: ["account": "\(account)", "availability": "\(current.availability)", "status": "\(current.status ?? "")"])
                await publisher.publishPresence(current)
            }
            next = self.waiting.removeValue(forKey: account)
        }
        self.publishing.remove(account)
    }

    private func timerFired(_ account: String) async {
        self.timers[account] = nil
        await self.run(self.relay.timerFired(account: account, now: self.clock.now))
    }

    private func run(_ actions: [PresenceRelay<C>.Action]) async {
        for action in actions {
            switch action {
            case .publish(let account, let state):
                await self.publish(state, on: account)
            case .schedule(let account, let instant):
                self.timers[account]?.cancel()
                let clock = self.clock
                self.timers[account] = Task {
                    guard (try? await clock.sleep(until: instant, tolerance: nil)) != nil else { return }
                    await self.timerFired(account)
                }
            case .localEvent(let channel, let transport, let contact, let nick, let state):
                guard let receiver = await self.capabilities(transport).presenceReceiving else { continue }
                await receiver.receivePresence(channel: channel, contact: contact, nick: nick, state: state)
            }
        }
    }
}
