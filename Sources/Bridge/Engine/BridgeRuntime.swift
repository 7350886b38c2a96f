import AccountTransport
import BridgeFeatures
import BridgeRelay
import BridgeRouting
import BridgeState
import GatewayComponent
import HTTPIngress
import Logging
import ServiceLifecycle
import TransportCore
import XMPP

/// The running bridge: its configuration, transports and their delivery workers, and the
/// routing table (configured channels merged with runtime route changes). Reloads
/// reconcile it without touching transports whose settings did not change.
package actor BridgeRuntime {
    /// The configuration as running: the file's, with gateway registrations merged in.
    private var configuration: BridgeConfiguration
    /// The file's configuration alone (a registration or SIGHUP merges again from it).
    private var fileConfiguration: BridgeConfiguration
    package let store: any StateStore
    private let factory: TransportFactory
    private let pipeline: RelayPipeline<ContinuousClock>
    package let logger: Logger
    private var transportServices: TransportServices?
    package private(set) var transports: [String: (transport: any Transport, capabilities: TransportCapabilities, worker: DeliveryWorker<ContinuousClock>, fingerprint: String)] = [:]
    /// With other instances on one state (issue 26): the leases this one holds. Leased
    /// transports start when their lease is granted (``takeOver(_:)``), not with the rest.
    package let leases: LeaseBook?
    private let directory = ChannelDirectory()
    private var nextInstance: UInt64 = 0
    /// What a former owner of an account taken over may have sent, for its next start.
    package var inherited: [String: InheritedDeliveries] = [:]
    /// With several instances: the instances and owners `status` shows (``ClusterView``).
    package private(set) var clusterView: (@Sendable () async -> ClusterView?)?

    /// Where `status` reads the instances and owners from (the lease keeper).
    package func attach(clusterView: @escaping @Sendable () async -> ClusterView?) {
        self.clusterView = clusterView
    }

    /// - Parameters:
    ///   - configuration: the file's.
    ///   - registrations: the gateway registrations in `store`, merged in.
    package init(
        configuration: BridgeConfiguration, registrations: [GatewayRegistrationRecord] = [], store: any StateStore, factory: TransportFactory,
        pipeline: RelayPipeline<ContinuousClock>, leases: LeaseBook? = nil, logger: Logger
    ) {
        self.leases = leases
        self.fileConfiguration = configuration
        self.registrations = registrations
        self.configuration = configuration.merging(registrations: registrations)
        self.store = store
        self.factory = factory
        self.pipeline = pipeline
        self.logger = logger
    }

    /// The routing table now: configured channels with runtime changes applied.
    package func channels() throws -> [RelayChannel] {
        try self.store.applyRoutes(to: self.configuration.channels)
    }

    package static func router(channels: [RelayChannel], configuration: BridgeConfiguration) -> Router {
        Router(
            channels: channels, ownJIDs: Set(configuration.accounts.values.map { $0.client.jid.bare.description.lowercased() }),
            gatewayLinks: Self.gatewayLinks(configuration), filters: configuration.filters
        )
    }

    /// Every gateway user and the account linked for them.
    package static func gatewayLinks(_ configuration: BridgeConfiguration) -> [GatewayLink] {
        configuration.gateways.values.sorted { $0.name < $1.name }.flatMap { gateway in
            gateway.users.map { GatewayLink(gateway: gateway.transportName, user: $0.jid, account: $0.account) }
        }
    }

    /// The gateway whose transport is `name`.
    package func gateway(named name: String) -> GatewayConfiguration? {
        self.configuration.gateways.values.first { $0.transportName == name }
    }

    /// The counters the configuration and the routes name (``RelayMetrics/prepare(_:)``).
    package static func metricSeries(channels: [RelayChannel], configuration: BridgeConfiguration) -> RelayMetrics.Series {
        RelayMetrics.Series(
            transports: Self.transportNames(configuration), accounts: configuration.accounts.keys.sorted(),
            deliveries: channels.flatMap { channel in
                channel.members.filter(\.direction.receives).map { (transport: $0.endpoint.transport, channel: channel.name) }
            },
            pagingChannels: configuration.paging.filter(\.value.isPaging).keys.sorted()
        )
    }

    /// Every transport name: accounts, locals, gateways.
    package static func transportNames(_ configuration: BridgeConfiguration) -> [String] {
        configuration.accounts.keys.sorted() + configuration.locals.keys.sorted() + configuration.gateways.values.map(\.transportName).sorted()
    }

    /// Builds the transports and workers for the configuration; returns their services.
    package func services() async -> [TransportServices.Part] {
        var services: [TransportServices.Part] = []
        let leased = self.leases == nil ? [] : Set(Self.leasedNames(self.configuration))
        for name in Self.transportNames(self.configuration) where !leased.contains(name) {
            services += await self.start(name)
        }
        await self.applyRooms()
        return services
    }

    func attach(_ transports: TransportServices) {
        self.transportServices = transports
    }

    /// Builds transport `name`; a failure (unreadable password) is logged and skipped.
    private func start(_ name: String) async -> [TransportServices.Part] {
        let pipeline = self.pipeline
        self.nextInstance += 1
        let instance = self.nextInstance
        let handler = TransportEventSink(pipeline: pipeline, instance: instance)
        let transport: any Transport
        let capabilities: TransportCapabilities
        let fingerprint: String
        if let account = self.configuration.accounts[name] {
            do {
                let made = try self.factory.make(
                    account: account, handler: handler, inherited: self.inherited.removeValue(forKey: name), encryption: self.configuration.encryption[name] ?? [:]
                )
                (transport, capabilities) = (made, .account(made))
            } catch {
                self.logger.error("account not started", metadata: ["account": "\(name)", "error": "\(error)"])
                return []
            }
            fingerprint = Self.fingerprint(account)
        } else if let local = self.configuration.locals[name] {
            let directory = self.directory
            do {
                (transport, capabilities) = try self.factory.make(
                    local: local, handler: handler, channels: { directory.names }, templates: { directory.template(for: $0) }
                )
            } catch {
                self.logger.error("local not started", metadata: ["local": "\(name)", "error": "\(error)"])
                return []
            }
            fingerprint = Self.fingerprint(local)
        } else if let gateway = self.gateway(named: name) {
            do {
                let made = try self.factory.make(gateway: gateway, handler: handler, linking: self.gatewayLinking)
                await made.setUsers(gateway.users)
                (transport, capabilities) = (made, .gateway(made))
            } catch {
                self.logger.error("gateway not started", metadata: ["gateway": "\(gateway.name)", "error": "\(error)"])
                return []
            }
            fingerprint = Self.fingerprint(gateway)
        } else {
            return []
        }
        let worker = pipeline.makeWorker(for: transport, configuration: ConfigurationLoader.queueConfiguration(self.configuration.settings))
        self.transports[name] = (transport, capabilities, worker, fingerprint)
        await pipeline.add(
            worker, instance: instance, stanzaLimit: self.configuration.accounts[name]?.maxStanzaBytes ?? self.gateway(named: name)?.maxStanzaBytes,
            fileSharing: capabilities.textFileSharing
        )
        return [.service(transport, name: "transport \(name)"), .worker(worker, name: "delivery worker \(name)")]
    }

    /// Applies a new configuration (SIGHUP): channels and routes at once; transports that
    /// were removed or changed are stopped, new or changed ones started; the rest keep
    /// their connections.
    /// - Parameter file: the file's new configuration; nil applies the current one again
    ///   (after a gateway registration changed what is merged into it).
    package func reload(_ file: BridgeConfiguration? = nil) async {
        // One at a time (SIGHUP, a gateway registration): each waits for the one before.
        let previous = self.reloading
        let task = Task {
            await previous?.value
            await self.apply(file)
        }
        self.reloading = task
        await task.value
    }

    /// The last reload asked for, which the next one waits for.
    private var reloading: Task<Void, Never>?

    private func apply(_ file: BridgeConfiguration?) async {
        let file = file ?? self.fileConfiguration
        self.fileConfiguration = file
        let registrations: [GatewayRegistrationRecord]
        do {
            registrations = try self.store.gatewayRegistrations()
        } catch {
            self.logger.error("cannot read gateway registrations; registered users stay as they were", metadata: ["error": "\(error)"])
            registrations = self.registrations
        }
        self.registrations = registrations
        let new = file.merging(registrations: registrations)
        let old = self.configuration
        self.configuration = new
        let names = Set(Self.transportNames(old)).union(Self.transportNames(new))
        let availability = await self.pipeline.availability
        for name in names.sorted() {
            let running = self.transports[name]
            let wanted: String? =
                new.accounts[name].map { Self.reloadFingerprint(Self.fingerprint($0), running: running?.fingerprint) }
                ?? new.locals[name].map { Self.fingerprint($0) }
                ?? self.gateway(named: name).map { Self.fingerprint($0) }
            // A transport that gave up (wrong password, rejected certificate) is tried again.
            if running?.fingerprint == wanted, availability[name]?.stopped != true { continue }
            // A leased transport not running here is another instance's (or nobody's yet).
            if self.runsElsewhere(name, in: new) { continue }
            await self.restart(name, wanted: wanted != nil)
        }
        await self.refreshRouter()
        // Each OMEMO account's contacts' `encryption`, as the channels now say.
        for (name, running) in self.transports {
            if let account = running.transport as? XMPPTransport { account.setEncryption(new.encryption[name] ?? [:]) }
        }
        await self.mirrors?.update(mirrors: new.rosterMirrors)
        for gateway in new.gateways.values {
            await self.transports[gateway.transportName]?.capabilities.puppets?.setUsers(gateway.users)
        }
        await self.gateways?.update(links: Self.gatewayLinks(new))
    }

    /// Stops transport `name` if it runs, and starts it anew when `wanted`.
    package func restart(_ name: String, wanted: Bool) async {
        if let running = self.transports[name] {
            self.logger.info("stopping transport", metadata: ["transport": "\(name)"])
            // No new batch on a connection about to close; the one in flight finishes.
            await self.pipeline.quiesce(transport: name)
            await running.transport.stop()
            await self.pipeline.remove(transport: name)
            self.transports.removeValue(forKey: name)
        }
        if wanted, let transports = self.transportServices {
            self.logger.info("starting transport", metadata: ["transport": "\(name)"])
            for service in await self.start(name) {
                transports.add(service)
            }
            await self.applyRooms()
            // Sharing the queue: rows queued for it while it was down are read back.
            if self.leases != nil { await self.pipeline.queueChanged(name) }
        }
    }

    /// `xmpp-bridge reconnect ACCOUNT`: a fresh connection now, whatever the account's state.
    package func reconnect(_ name: String) async -> Bool {
        guard self.configuration.accounts[name] != nil || self.configuration.locals[name] != nil || self.gateway(named: name) != nil else { return false }
        // (A leased transport run elsewhere is that instance's to reconnect: `describe` asks it.)
        await self.restart(name, wanted: true)
        return true
    }

    /// Rebuilds the router from configuration and stored route changes.
    package func refreshRouter() async {
        do {
            let channels = try self.channels()
            let names = Set(channels.map(\.name))
            await self.pipeline.update(router: Self.router(channels: channels, configuration: self.configuration))
            await self.pipeline.updatePaging(policies: self.configuration.paging)
            self.pipeline.outlets.metrics.prepare(Self.metricSeries(channels: channels, configuration: self.configuration))
            self.directory.names = names
            self.directory.templates = self.configuration.webhookTemplates.compactMapValues { try? WebhookTemplate($0) }
            await self.presence?.update(settings: PresenceSettings(self.configuration), channels: channels)
            await self.applyRooms(channels: channels)
        } catch {
            self.logger.error("cannot read routes", metadata: ["error": "\(error)"])
        }
    }

    package var currentConfiguration: BridgeConfiguration { self.configuration }


    /// The running transport with this name.
    /// What transport `name` can do beyond relaying (``TransportCapabilities/none`` when it
    /// is not running).
    package func capabilities(of name: String) -> TransportCapabilities {
        self.transports[name]?.capabilities ?? .none
    }

    package func transport(named name: String) -> (any Transport)? {
        self.transports[name]?.transport
    }

    /// Coordinators told about reloads and route changes.
    private var presence: PresenceCoordinator<ContinuousClock>?
    private var mirrors: RosterMirrorCoordinator<ContinuousClock>?

    private var gateways: GatewayCoordinator?
    /// The registrations merged into ``configuration``.
    private var registrations: [GatewayRegistrationRecord] = []
    /// Registers and unregisters gateway users (XEP-0077), when the daemon has a state file.
    private var gatewayLinking: (any GatewayLinking)?

    package func attach(presence: PresenceCoordinator<ContinuousClock>, mirrors: RosterMirrorCoordinator<ContinuousClock>, gateways: GatewayCoordinator? = nil) {
        self.presence = presence
        self.mirrors = mirrors
        self.gateways = gateways
    }

    package func attach(gatewayLinking: any GatewayLinking) {
        self.gatewayLinking = gatewayLinking
    }

    package var rosterMirrors: RosterMirrorCoordinator<ContinuousClock>? { self.mirrors }

    package var storeForStatus: any StateStore { self.store }

    package var relay: RelayPipeline<ContinuousClock> { self.pipeline }

    /// What a reload compares: the account's settings and a hash of its secret as read now
    /// (the same file, variable or command can give a new password). The hash is Swift's
    /// per-process seeded `Hasher`: comparable within this process only, never logged.
    package static func fingerprint(_ account: AccountConfiguration) -> String {
        let client = account.client
        var secret = Hasher()
        let password = try? account.password.read()
        secret.combine(password ?? "")
        return [
            client.jid.description, client.host ?? "", client.port.map(String.init) ?? "", client.tlsMode.rawValue,
            client.tls.additionalTrustRootsFile ?? "", "\(client.tls.certificateVerification)", "\(account.password)",
            account.subscriptionPolicy.rawValue, "\(account.maxStanzaBytes)", "\(account.streamManagement)",
            "\(account.catchUp)", "\(account.catchUpMaxAge.map { "\($0)" } ?? "unlimited")",
            // A new nick or avatar logs in again, which publishes it.
            account.profile.nick ?? "", account.profile.avatar?.id ?? "",
            password == nil ? Self.unreadableSecret : "\(secret.finalize())",
        ].joined(separator: "|")
    }

    /// A local's settings and, for an http local, a hash of its token as read now (a new
    /// token in the same file takes effect on SIGHUP).
    package static func fingerprint(_ local: LocalConfiguration) -> String {
        guard let token = local.http?.token else { return "\(local)" }
        var secret = Hasher()
        secret.combine((try? token.read()) ?? Self.unreadableSecret)
        return "\(local)|\(secret.finalize())"
    }

    /// A gateway's settings and a hash of its secret as read now.
    package static func fingerprint(_ gateway: GatewayConfiguration) -> String {
        var secret = Hasher()
        secret.combine((try? gateway.secret.read()) ?? Self.unreadableSecret)
        var settings = gateway
        settings.users = []  // Users change without a reconnection.
        return "\(settings)|\(secret.finalize())"
    }

    /// The fingerprint's last part when the password cannot be read now.
    package static let unreadableSecret = "unreadable"

    /// `wanted` for a reload: a password that cannot be read now (a failing command) keeps
    /// the running session's, instead of restarting an account that works into a failure.
    package static func reloadFingerprint(_ wanted: String, running: String?) -> String {
        guard wanted.hasSuffix("|" + Self.unreadableSecret), let running, let cut = running.lastIndex(of: "|"),
            let wantedCut = wanted.lastIndex(of: "|"), wanted[..<wantedCut] == running[..<cut]
        else { return wanted }
        return running
    }
}
