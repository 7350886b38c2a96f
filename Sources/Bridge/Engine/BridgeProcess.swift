import BridgeFeatures
import BridgeRelay
import BridgeState
import Foundation
import Logging
import NIOPosix
import Prometheus
import ServiceLifecycle
import TransportCore
import XMPP

/// Assembles a running bridge from a configuration: state database, engine, runtime,
/// every transport with its worker, and the control socket, all under one ServiceGroup.
/// `run` and `demo` both use it.
package struct BridgeProcess {
    package let group: ServiceGroup
    package let runtime: BridgeRuntime
    package let pipeline: RelayPipeline<ContinuousClock>
    package let journal: Journal
    package let store: any StateStore
    package let eventLoops: MultiThreadedEventLoopGroup
    package let blockingWork: NIOThreadPool
    /// Held for the process's lifetime (nil for an in-memory state).
    package let lock: InstanceLock?
    /// What a shutdown still waits on, told while it takes long.
    let progress: StopProgress<ContinuousClock>

    package static func make(configuration file: BridgeConfiguration, logger: Logger, extraServices: [any Service] = []) async throws -> BridgeProcess {
        var configuration = file
        // `state = ":memory:"` keeps nothing across restarts (for benchmarks and tests).
        let postgres = configuration.settings.stateURL
        let inMemory = postgres == nil && (configuration.settings.statePath as NSString).lastPathComponent == ":memory:"
        // Waits briefly for a command that reads or edits the database without a daemon (with
        // PostgreSQL: for another daemon on this host using the same local files).
        let lock = inMemory ? nil : try await InstanceLock.acquire(path: configuration.settings.statePath + ".lock", wait: .seconds(3))
        let store: any StateStore
        // With PostgreSQL, instances share the state and each transport goes by lease.
        let leases = postgres == nil ? nil : LeaseBook(instance: configuration.settings.instance, logger: logger)
        var shared: PostgresStateStore?
        if let postgres {
            let database = try PostgresStateStore(
                url: postgres, password: try configuration.settings.statePassword?.read(), applicationName: configuration.settings.bridgeID, leases: leases
            )
            shared = database
            store = database
        } else {
            store = inMemory ? try SQLiteStateStore.inMemory() : try SQLiteStateStore(path: configuration.settings.statePath, manualCheckpoints: true)
        }
        // Only a local SQLite file has a WAL to checkpoint and an intake log: with
        // PostgreSQL an entry is durable once the database has it, so losing this host loses
        // nothing acknowledged.
        let local = !inMemory && postgres == nil
        // The id map only has to recognise recent echoes and serve recent receipts.
        _ = try? store.pruneRelays(before: Date().addingTimeInterval(-30 * 24 * 3600))
        // Gateway users who registered in band join as accounts and users.
        let registrations = try store.gatewayRegistrations()
        configuration = configuration.merging(registrations: registrations)
        let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // SCRAM's PBKDF2 on first logins runs here, not on the accounts' event loop.
        let blockingWork = NIOThreadPool(numberOfThreads: 1)
        blockingWork.start()
        let groupBox = GroupBox()
        // Metrics go to this registry only (no global metrics system); served when
        // `metrics_listen` is set, counted either way (cheap).
        let registry = PrometheusCollectorRegistry()
        let metricsFactory = DocumentedMetricsFactory(
            registry: registry,
            durationBuckets: [
                "xmpp_bridge_relay_latency_seconds": [
                    .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                    .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(30), .seconds(120),
                    .seconds(600), .seconds(3600),
                ]
            ]
        )
        let metrics = RelayMetrics(factory: metricsFactory)
        var random = SystemRandomNumberGenerator()
        let checkpointer = local ? try WALCheckpointer(path: configuration.settings.statePath, logger: logger) : nil
        // The lazy-completion timer lives on the event loop, which is awake for the relay anyway.
        let journalLoop = eventLoops.next()
        // Entries are durable in the intake log before SQLite applies them (off the relay path).
        let intake = local ? try IntakeLogFile(path: configuration.settings.statePath + ".intake") : nil
        // With the log, applying to SQLite is off every path that waits: one transaction per
        // half second at a trickle, in which a delivery acknowledged meanwhile costs no queue row.
        let journal = try Journal(
            store: store, log: intake, checkpointer: checkpointer, lazyDelay: intake == nil ? .milliseconds(50) : .milliseconds(500),
            clock: EventLoopClock(journalLoop), timerExecutor: EventLoopTaskExecutor(journalLoop), sharedQueue: shared, logger: logger
        )
        let statusBook = DeliveryStatusBook(store: store, journal: journal, clock: ContinuousClock())
        let pipeline = RelayPipeline(
            router: BridgeRuntime.router(channels: [], configuration: configuration),
            journal: journal,
            ids: StanzaIDGenerator(prefix: "\(configuration.settings.bridgeID)-\(String(random.next() % 1_000_000_000_000, radix: 36))"),
            idPrefix: "\(configuration.settings.bridgeID)-",
            clock: ContinuousClock(),
            logger: logger,
            metrics: metrics,
            settled: { delivered, failed in statusBook.settled(delivered.map(\.0), failed: failed) },
            leases: leases, finish: { await groupBox.group?.triggerGracefulShutdown() }
        )
        // Stream positions beside the database; what the last process saw acknowledged
        // leaves the queue before it is loaded, whether or not its completion was committed.
        let ledgers = inMemory ? nil : try StreamLedgers(folder: configuration.settings.statePath + ".ledger")
        if let ledgers {
            for account in configuration.accounts.keys {
                let acknowledged = try ledgers.ledger(for: account).snapshot().acknowledgedIDs
                try store.completeAcknowledged(transport: account, relayIDs: acknowledged)
            }
            for gateway in configuration.gateways.values {
                // Handed to the server: answered, or in the kernel's socket buffer on a link
                // that was still up when the process ended (the kernel passes it on).
                let snapshot = try ledgers.ledger(for: gateway.transportName).snapshot()
                let handed = snapshot.acknowledgedIDs + (snapshot.current != nil ? snapshot.unacknowledgedIDs.filter { !$0.isEmpty } : [])
                // Any attempt: a gateway delivery is retried mostly after a lost link, and the new copy is
                // in the ledger too (one the user's server bounced after taking it is rare, and not resent).
                try store.completeAcknowledged(transport: gateway.transportName, relayIDs: handed, firstAttemptsOnly: false)
                if !snapshot.inDoubtIDs.isEmpty {
                    logger.warning(
                        "component messages in doubt: the last process ended between writing them and recording it; sent again, so they may arrive twice",
                        metadata: ["gateway": "\(gateway.transportName)", "in doubt": "\(snapshot.inDoubtIDs.count)"]
                    )
                }
            }
        }
        try await pipeline.load(from: store)
        if let shared { await pipeline.share(queue: shared) }
        let paging = PagingService(pipeline: pipeline, clock: ContinuousClock())
        try await pipeline.loadPaging(from: store, policies: configuration.paging, silences: AlertmanagerClient(group: eventLoops, logger: logger), service: paging)
        let runtime = BridgeRuntime(
            configuration: file, registrations: registrations, store: store,
            factory: TransportFactory(
                group: eventLoops, bridgeID: configuration.settings.bridgeID,
                deliveryTimeout: .milliseconds(configuration.settings.deliveryTimeoutMilliseconds),
                eventBuffer: configuration.settings.eventBuffer,
                journal: inMemory ? nil : journal, storedStartingPoint: { try store.startingPoint(transport: $0) },
                // A server restart under thousands of accounts: a few warnings and a summary.
                connectionNotices: ConnectionNotices(clock: EventLoopClock(eventLoops.next()), logger: logger),
                ledgers: ledgers,
                connectionGates: ConnectionGates(limitPerServer: configuration.settings.maxConcurrentLogins), blockingWork: blockingWork, leases: leases,
                deliveryStatus: statusBook, archive: ArchiveReader(pipeline: pipeline), metrics: metricsFactory, logger: logger
            ),
            pipeline: pipeline, leases: leases, logger: logger
        )
        statusBook.attach(queued: { await pipeline.queued(among: $0) }, accounts: { Set(await runtime.currentConfiguration.accounts.keys) })
        statusBook.attach(pages: { source, id in await pipeline.page(source: source, id: id) })
        let lookup: @Sendable (String) async -> TransportCapabilities = { name in await runtime.capabilities(of: name) }
        let presence = PresenceCoordinator(
            settings: PresenceSettings(configuration), channels: (try? store.applyRoutes(to: configuration.channels)) ?? configuration.channels,
            capabilities: lookup, clock: ContinuousClock(), logger: logger
        )
        let mirrors = RosterMirrorCoordinator(mirrors: configuration.rosterMirrors, store: store, capabilities: lookup, clock: ContinuousClock(), logger: logger)
        let gateways = GatewayCoordinator(links: BridgeRuntime.gatewayLinks(configuration), capabilities: lookup, logger: logger)
        await pipeline.observe(with: presence)
        await pipeline.observe(with: mirrors)
        await pipeline.observe(with: gateways)
        await runtime.attach(presence: presence, mirrors: mirrors, gateways: gateways)
        await runtime.attach(gatewayLinking: GatewayRegistrar(runtime: runtime, group: eventLoops, tlsContexts: TLSContextCache(), blockingWork: blockingWork, logger: logger))
        await runtime.refreshRouter()
        // Every transport and its worker as one service: told of a shutdown at once.
        // A shutdown that takes long says what it waits on.
        let progress = StopProgress(clock: ContinuousClock(), logger: logger)
        let transports = TransportServices(await runtime.services(), progress: progress, logger: logger)
        await runtime.attach(transports)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // Each of the group's services, named in the shutdown's warnings; the group keeps
        // running when one ends or fails.
        func add(_ name: String, _ service: any Service) {
            services.append(
                .init(service: StopProgress.Watched(name: name, service: service, progress: progress), successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore)
            )
        }
        add("transports", transports)
        let control = ControlServer(path: configuration.settings.controlSocketPath, runtime: runtime, store: store, group: eventLoops, logger: logger)
        add("control socket", control)
        add("paging", paging)
        let keeper = ArchiveKeeper(journal: journal, retention: { await pipeline.archiveRetention() }, clock: ContinuousClock(), logger: logger)
        add("archive keeper", keeper)
        if let listen = configuration.settings.metricsListen {
            add("metrics server", MetricsServer(listen: listen, registry: registry, factory: metricsFactory, runtime: runtime, group: eventLoops, logger: logger))
        }
        if let systemd = SystemdNotifier<ContinuousClock>.Settings(environment: ProcessInfo.processInfo.environment, pid: getpid()) {
            add("systemd notifier", SystemdNotifier(settings: systemd, clock: ContinuousClock(), alive: { _ = await pipeline.availability }, logger: logger))
        }
        if let shared, let leases {
            let keeper = LeaseKeeper(
                connect: { () throws(PostgresError) in try shared.connect(purpose: "leases") }, book: leases, ttl: configuration.settings.leaseTTL,
                resources: { await runtime.leasedNames() }, start: { await runtime.takeOver($0, formerOwnerSilence: $1) }, stop: { await runtime.handBack($0, lost: $1) },
                logger: logger
            )
            await runtime.attach(clusterView: { await keeper.view() })
            let listener = NoticeListener(
                instance: leases.instance, connect: { () throws(PostgresError) in try shared.connect(purpose: "queue") },
                heard: { names in
                    Task {
                        let targets: [String]
                        if let names { targets = Array(names) } else { targets = await runtime.leasedNames() }
                        for name in targets { await pipeline.queueChanged(name) }
                    }
                },
                control: { notice in Task { await runtime.heard(notice) } },
                logger: logger
            )
            add("notice listener", listener)
            // Last: on graceful shutdown it is the first told, and gives its leases back
            // while the rest still runs.
            add("lease keeper", keeper)
        }
        for service in extraServices { add("\(type(of: service))", service) }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        groupBox.group = group
        return BridgeProcess(
            group: group, runtime: runtime, pipeline: pipeline, journal: journal, store: store, eventLoops: eventLoops, blockingWork: blockingWork, lock: lock,
            progress: progress
        )
    }

    package func run() async throws {
        let progress = self.progress
        let watch = Task { await progress.watch() }
        defer { watch.cancel() }
        try await self.group.run()
        // Completions recorded by the last batches reach the database before we exit.
        await progress.running("journal") { await self.journal.shutdown() }
        try? await progress.running("event loops") { try await self.eventLoops.shutdownGracefully() }
        try? await progress.running("blocking work") { try await self.blockingWork.shutdownGracefully() }
    }

    init(
        group: ServiceGroup, runtime: BridgeRuntime, pipeline: RelayPipeline<ContinuousClock>, journal: Journal, store: any StateStore, eventLoops: MultiThreadedEventLoopGroup,
        blockingWork: NIOThreadPool, lock: InstanceLock? = nil, progress: StopProgress<ContinuousClock>
    ) {
        self.progress = progress
        self.group = group
        self.runtime = runtime
        self.pipeline = pipeline
        self.journal = journal
        self.store = store
        self.eventLoops = eventLoops
        self.blockingWork = blockingWork
        self.lock = lock
    }
}
