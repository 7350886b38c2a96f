import Logging
import Transports
import XMPP

/// The relay path in one place: a transport's message → echo check → ``Router`` → durable
/// queue (written before any attempt) → the target transports' ``DeliveryWorker``s.
actor BridgeEngine: TransportEventHandler {
    private var router: Router
    private let store: StateStore
    private var ids: StanzaIDGenerator
    private var workers: [String: DeliveryWorker] = [:]
    private let logger: Logger
    /// Called once everything is delivered after an input asked to finish (stdin ended).
    private let finish: @Sendable () async -> Void
    private var finishing = false
    /// Receive presence, availability and roster events (presence relay, roster mirrors).
    private var observers: [any TransportEventHandler] = []
    /// What each transport last reported, for `xmpp-bridge status`.
    private(set) var availability: [String: (available: Bool, reason: String?)] = [:]

    /// The current instance of each transport; events from others are stale.
    private var instances: [String: UInt64] = [:]

    /// Every relay id we generate starts with this; only such ids can be echoes.
    private let idPrefix: String

    init(router: Router, store: StateStore, ids: StanzaIDGenerator, idPrefix: String = "", logger: Logger, finish: @escaping @Sendable () async -> Void) {
        self.idPrefix = idPrefix
        self.router = router
        self.store = store
        self.ids = ids
        self.logger = logger
        self.finish = finish
    }

    func observe(with observer: any TransportEventHandler) {
        self.observers.append(observer)
    }

    private func notify(_ event: TransportEvent, from transport: String) async {
        for observer in self.observers {
            await observer.handle(event, from: transport)
        }
    }

    func add(_ worker: DeliveryWorker, instance: UInt64? = nil) {
        self.workers[worker.transport.name] = worker
        if let instance { self.instances[worker.transport.name] = instance }
    }

    func remove(transport name: String) {
        self.workers.removeValue(forKey: name)?.stop()
        self.instances.removeValue(forKey: name)
    }

    /// An event from one transport instance; dropped if a reload replaced that instance.
    func handle(_ event: TransportEvent, from transport: String, instance: UInt64) async -> TransportEventOutcome {
        guard self.instances[transport] == instance else {
            self.logger.debug("event from a replaced transport ignored", metadata: ["transport": "\(transport)"])
            return .dropped("transport replaced")
        }
        return await self.process(event, from: transport)
    }

    /// Replaces the routing table (reload, runtime route change).
    func update(router: Router) {
        self.router = router
    }

    nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.process(event, from: transport)
    }

    private func process(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        switch event {
        case .message(let message):
            return self.relay(message)
        case .available:
            self.availability[transport] = (true, nil)
            self.workers[transport]?.setAvailable(true)
            await self.notify(event, from: transport)
        case .unavailable(let reason):
            self.logger.info("transport unavailable; its deliveries wait in the queue", metadata: ["transport": "\(transport)", "reason": "\(reason ?? "-")"])
            self.availability[transport] = (false, reason)
            self.workers[transport]?.setAvailable(false)
            await self.notify(event, from: transport)
        case .inputFinished:
            self.finishing = true
            await self.finishIfDrained()
        case .presence, .ownPresence, .rosterChanged:
            await self.notify(event, from: transport)
        }
        return .accepted
    }

    private func relay(_ message: InboundMessage) -> TransportEventOutcome {
        do {
            if message.id.hasPrefix(self.idPrefix), try self.store.isRelayID(message.id) {
                self.logger.debug("echo of a message we relayed; not relayed again", metadata: ["id": "\(message.id)"])
                return .dropped("echo of a relayed message")
            }
        } catch {
            self.logger.error("cannot read the id map", metadata: ["error": "\(error)"])
        }
        switch self.router.route(message, makeID: { self.ids.next() }) {
        case .drop(let reason):
            // Strangers and non-members are never relayed (no open relay).
            self.logger.debug("not relayed", metadata: ["from": "\(message.source)", "reason": "\(reason)"])
            return .dropped(reason.description)
        case .deliver(let deliveries):
            do {
                let queued = try self.store.enqueue(deliveries)
                for target in Set(queued.map(\.target.transport)) {
                    self.workers[target]?.wake()
                }
                return .accepted
            } catch {
                self.logger.error("cannot queue deliveries; message not relayed", metadata: ["error": "\(error)"])
                return .dropped("state database error")
            }
        }
    }

    /// After an input finished: stop once the queue is empty, or after `drainTimeout`;
    /// what is still queued then stays in the state database for the next run.
    func finishIfDrained(drainTimeout: Duration = .seconds(30)) async {
        guard self.finishing else { return }
        let deadline = ContinuousClock.now + drainTimeout
        var pending = 0
        repeat {
            // Only what running transports could still deliver (rows for removed ones wait).
            pending = self.workers.keys.reduce(0) { $0 + ((try? self.store.pendingCount(transport: $1)) ?? 0) }
            if pending == 0 { break }
            try? await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        if pending == 0 {
            self.logger.info("input finished and everything delivered; stopping")
        } else {
            self.logger.warning("input finished; \(pending) deliveries still queued for the next run")
        }
        await self.finish()
    }
}
