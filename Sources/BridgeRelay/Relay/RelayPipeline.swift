import BridgeRouting
import BridgeState
import Foundation
import Logging
import NIOConcurrencyHelpers
import TransportCore
import XMPP

/// The relay path, one stage after another (issue 8; the stages as types, issue 40):
///
/// 1. **intake**: a transport's event arrives through its ``TransportEventSink``; a source
///    whose lease lapsed is fenced off (``LeaseBook``);
/// 2. **repeat and echo check** (``RepeatCheck``): a message handed over again, and ids this
///    bridge generated, are never relayed again;
/// 3. **route** (``RoutingStage``): the pure ``Router`` picks the targets (members only, no
///    loops);
/// 4. **split** (``SplitStage``): a delivery over its XMPP target's stanza limit becomes
///    parts (``DeliverySplitter``); the **paging gate** (``PagingDesk``) postpones what
///    waits and opens a local alert's page;
/// 5. **room**: each target's queue must have room, else intake waits (backpressure, never drops);
/// 6. **journal**: the deliveries get their sequences, **archiving** (``ArchiveStage``) adds
///    the archive's entries to the commit, and it is durable once copied into the intake
///    log (``Journal``, ``IntakeLogFile``);
///    only then is the source answered (the socket reply, the stdin/FIFO read of the next
///    line, the XMPP server's `<a h/>`);
/// 7. **queue**: the deliveries join each target's in-memory ``DeliveryQueue``, whose
///    ``DeliveryWorker`` hands them to the target transport.
///
/// Thread hops from a socket read to a socket write, for an XMPP source and target: none.
/// Each account's session, its event intake and its delivery worker prefer the account's
/// event loop (``EventLoopTaskExecutor``; the daemon runs one loop), and this actor is a
/// default actor, so it runs on the thread of the task that calls it: the socket read,
/// decoding, the session's machines, stages 1–7 and the target session's write all run on
/// the loop. The journal's thread applies the intake log to SQLite every 50 ms, beside the
/// path. Without the log (full, or an in-memory state) stage 6 is a group commit there,
/// whose completion hands the deliveries to the workers: one hop there and one back.
/// An event that finds this actor busy with another account's event (on another loop)
/// continues where that one runs: one more hop, only under contention. Local sources
/// without an event loop (stdin, FIFO) start on Swift's global pool. Observers (presence
/// relay, roster mirrors) get their events through mailboxes and are never awaited here.
package actor RelayPipeline<C: Clock>: TransportEventHandler where C.Duration == Duration, C.Instant: Sendable {
    package typealias Worker = DeliveryWorker<C>

    package let journal: Journal
    package let logger: Logger
    package let clock: C
    /// The stages, in the order a message meets them (``route(_:notificationKey:)``).
    package var repeats: RepeatCheck
    package var routing: RoutingStage
    package var splitting: SplitStage
    /// Alerts of paging channels, accepted notifications, the paging timer, the gate on the
    /// relay path (issue 24).
    package var paging: PagingDesk
    package var archiving = ArchiveStage()
    /// Each target transport's worker, parked deliveries and last report.
    package var targetTable = TargetTable<C>()
    /// Whom the pipeline tells: observers, metrics, `?wait=sent`, dead-letter counts.
    package nonisolated let outlets: RelayOutlets
    /// With other instances on the same state (issue 26): the shared queue, and the leases
    /// this instance holds (the fence: intake and workers stop the moment one lapses).
    package var shared: SharedQueueState?
    package nonisolated let leases: LeaseBook?

    package init(
        router: Router, journal: Journal, ids: StanzaIDGenerator, idPrefix: String = "", clock: C, logger: Logger,
        metrics: RelayMetrics = .noop, settled: @escaping RelayOutlets.Settled = { _, _ in },
        leases: LeaseBook? = nil, finish: @escaping @Sendable () async -> Void
    ) {
        self.journal = journal
        self.logger = logger
        self.clock = clock
        self.repeats = RepeatCheck(relayIDPrefix: idPrefix)
        self.routing = RoutingStage(router: router, ids: ids)
        self.splitting = SplitStage(logger: logger)
        self.paging = PagingDesk(logger: logger)
        self.outlets = RelayOutlets(metrics: metrics, settled: settled, finish: finish)
        self.leases = leases
    }

    /// What each transport last reported, for `xmpp-bridge status`.
    package var availability: [String: (available: Bool, reason: String?, stopped: Bool)] { self.targetTable.availability }

    /// Reads the queue, dead-letter counts and deduplication keys back from `store`, the
    /// journal's: done once, at start, before the journal runs.
    package func load(from store: any StateStore) throws(StateStoreError) {
        for record in try store.loadQueue() {
            if let entry = record.queued { self.targetTable.parked[record.targetTransport, default: []].append(entry) }
        }
        var counts: [String: Int] = [:]
        for letter in try store.deadLetters() { counts[letter.targetTransport, default: 0] += 1 }
        self.outlets.deadLetters.withLockedValue { $0 = counts }
        for (transport, keys) in try store.seenDeduplicationKeys(limit: self.repeats.window) {
            self.repeats.restore(keys, for: transport)
        }
    }


    package func observe(with observer: any TransportEventHandler) {
        self.outlets.observe(with: observer)
    }

    /// A worker for `configuration`'s queue of `transport`; not yet registered.
    package nonisolated func makeWorker(for transport: any Transport, configuration: DeliveryQueue<C.Instant>.Configuration) -> Worker {
        let counts = self.outlets.deadLetters
        let metrics = self.outlets.metrics
        let settled = self.outlets.settled
        let leases = self.leases
        let name = transport.name
        return Worker(
            transport: transport, journal: self.journal, configuration: configuration, clock: self.clock, logger: self.logger,
            deadLettered: { letter in counts.withLockedValue { $0[letter.delivery.target.transport, default: 0] += 1 } },
            settled: { delivered, failed in
                metrics.delivered(delivered, now: Date())
                metrics.failed(failed.map(\.0))
                settled(delivered, failed)
            },
            mayWork: { leases?.mayWork(name) ?? true }
        )
    }

    package func add(_ worker: Worker, instance: UInt64? = nil, stanzaLimit: Int? = nil, fileSharing: (any TextFileSharing)? = nil) {
        let name = worker.transport.name
        self.targetTable.workers[name] = worker
        self.paging.fileSharing[name] = fileSharing
        if let instance { self.targetTable.instances[name] = instance }
        self.splitting.limits[name] = stanzaLimit
        self.shared?.adopting.remove(name)
        if let waiting = self.targetTable.parked.removeValue(forKey: name) { worker.append(waiting) }
    }

    /// Stops `name`'s worker from starting another batch (before its transport stops, so
    /// nothing new goes out on a connection about to close).
    package func quiesce(transport name: String) {
        self.targetTable.workers[name]?.stop()
    }

    /// Stops `name`'s worker and parks what it still holds for a successor. A batch in
    /// flight is waited for first: what the old transport delivered must not be handed to
    /// the new one (a reload would send it twice). Commits under way are waited for too,
    /// so none of them hands its deliveries to the stopped worker after the snapshot.
    package func remove(transport name: String) async {
        self.targetTable.availability.removeValue(forKey: name)
        guard let worker = self.targetTable.workers.removeValue(forKey: name) else { return }
        self.paging.fileSharing.removeValue(forKey: name)
        self.targetTable.draining[name] = worker
        defer { self.targetTable.draining.removeValue(forKey: name) }
        worker.stop()
        self.targetTable.instances.removeValue(forKey: name)
        await worker.settled()
        await self.journal.flushed()
        let pending = worker.snapshot().pending.map { (delivery: $0.delivery, enqueuedAt: $0.enqueuedAt, attempts: $0.attempts) }
        if let successor = self.targetTable.workers[name] {
            // A new worker was added while we waited (reconnect and reload together).
            successor.append(pending)
        } else {
            // Deliveries committed while we waited were parked already; order by sequence.
            self.targetTable.parked[name] = (pending + (self.targetTable.parked[name] ?? [])).sorted { $0.delivery.sequence < $1.delivery.sequence }
        }
    }

    /// Each transport's queue for `status`: depth, oldest item, dead letters.
    package func queueStatus() -> [String: (queued: Int, oldest: Date?, dead: Int)] {
        let dead = self.outlets.deadLetters.withLockedValue { $0 }
        var result: [String: (queued: Int, oldest: Date?, dead: Int)] = [:]
        for (name, worker) in self.targetTable.workers {
            let snapshot = worker.snapshot()
            result[name] = (snapshot.count, snapshot.oldest, dead[name] ?? 0)
        }
        for (name, waiting) in self.targetTable.parked where result[name] == nil {
            result[name] = (waiting.count, waiting.first?.enqueuedAt, dead[name] ?? 0)
        }
        for (name, count) in dead where result[name] == nil { result[name] = (0, nil, count) }
        return result
    }

    /// Replaces the routing table (reload, runtime route change).
    package func update(router: Router) {
        self.routing.router = router
    }

    // MARK: 1. Intake

    /// An event from one transport instance; dropped if a reload replaced that instance.
    package func handle(_ event: TransportEvent, from transport: String, instance: UInt64) async -> TransportEventOutcome {
        guard self.targetTable.instances[transport] == instance else {
            self.logger.debug("event from a replaced transport ignored", metadata: ["transport": "\(transport)"])
            return .dropped(DropReason.transportReplaced.description)
        }
        return await self.process(event, from: transport)
    }

    package nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.process(event, from: transport)
    }

    /// Everything handed over so far is durable when this returns (in the intake log, or
    /// committed).
    package nonisolated func barrier() async {
        await self.journal.durable()
    }

    private func process(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        switch event {
        case .message(let message):
            // Intake stops the moment this instance's lease on the source is no longer good
            // (self-fencing): another instance may own it already.
            if let leases = self.leases, !leases.mayWork(transport) {
                self.logger.warning("message from a transport whose lease is no longer held here; left to its new owner", metadata: ["transport": "\(transport)"])
                return .dropped(DropReason.transportReplaced.description)
            }
            return await self.relay(message)
        case .available:
            if let before = self.targetTable.availability[transport], !before.available { self.outlets.metrics.reconnected(transport) }
            self.targetTable.availability[transport] = (true, nil, false)
            self.targetTable.workers[transport]?.setAvailable(true)
            self.notify(event, from: transport)
        case .unavailable(let reason):
            self.logger.info("transport unavailable; its deliveries wait in the queue", metadata: ["transport": "\(transport)", "reason": "\(reason ?? "-")"])
            self.targetTable.availability[transport] = (false, reason, false)
            self.targetTable.workers[transport]?.setAvailable(false)
            self.notify(event, from: transport)
        case .stopped(let reason):
            self.logger.error("transport stopped; SIGHUP or `xmpp-bridge reconnect` tries again", metadata: ["transport": "\(transport)", "reason": "\(reason)"])
            self.targetTable.availability[transport] = (false, reason, true)
            self.targetTable.workers[transport]?.setAvailable(false)
            self.notify(.unavailable(reason: reason), from: transport)
        case .inputFinished:
            await self.finishWhenDrained()
        case .presence, .ownPresence, .rosterChanged, .subscriptionRequest, .subscriptionApproved:
            self.notify(event, from: transport)
        case .bounced(let relayID, let reason, let permanent):
            self.bounced(relayID: relayID, reason: reason, permanent: permanent, from: transport)
        case .resumePointMoved(let point):
            self.journal.record([.resumePoint(key: point.storageKey(transport: transport), position: point.position)])
            self.outlets.metrics.caughtUp(transport)
        case .targetReady(let target):
            self.targetTable.workers[transport]?.targetReady(Router.normalized(target))
        case .occupant(let room, let nick, let joined):
            self.notify(event, from: transport)
            // As text too, into channels that ask for it (`occupant_events`).
            var notice = InboundMessage(
                source: room, sender: "\(room.address ?? "")/\(nick)", nick: nick, id: "occupant-\(self.routing.ids.next())",
                body: joined ? "entered the room" : "left the room", awaitsCommit: false
            )
            notice.isOccupantNotice = true
            return await self.relay(notice)
        case .receipt(let receipt):
            await self.receipt(receipt, now: Date())
        case .copyStanzaID(let relayID, let target, let stanzaID):
            self.journal.record([.copyStanzaID(relayID: relayID, target: Router.normalized(target), stanzaID: stanzaID)])
        case .alertAcked:
            self.notify(event, from: transport)
        case .acknowledgedBeforeRestart(let relayIDs):
            let count = self.targetTable.workers[transport]?.acknowledged(relayIDs: relayIDs) ?? 0
            self.logger.info("deliveries taken before resumption; not sent again", metadata: ["transport": "\(transport)", "count": "\(count)"])
        }
        return .accepted
    }

    package func notify(_ event: TransportEvent, from transport: String) {
        self.outlets.notify(event, from: transport)
    }

    private func relay(_ message: InboundMessage) async -> TransportEventOutcome {
        self.outlets.metrics.received(from: message.source.transport)
        // An Alertmanager HA pair's second copy of a notification (issue 24).
        let acceptance = self.acceptance(of: message)
        switch acceptance.lookup {
        case .duplicate(let first):
            self.outlets.metrics.dropped(reason: DropReason.alreadyHandled.label)
            return .duplicate(of: first)
        case .pending:
            self.outlets.metrics.dropped(reason: DropReason.notificationPending.label)
            return .dropped(DropReason.notificationPending.description)
        case .new:
            break
        }
        let dropped = await self.route(message, notificationKey: acceptance.key)
        if let key = acceptance.key {
            // Not committed: a retry is new; otherwise copies are duplicates from now on.
            if dropped == .stateError { self.paging.accepted.forget(key) } else { self.paging.accepted.committed(key) }
        }
        guard let reason = dropped else { return .accepted }
        self.outlets.metrics.dropped(reason: reason.label)
        return .dropped(reason.description)
    }

    /// Relays `message`; why not, when it is not. The stages run in order over its work;
    /// what waits (the id map, room in the queues, the commit) is done here between them.
    private func route(_ message: InboundMessage, notificationKey: String?) async -> DropReason? {
        // What the source's position moves by, committed whether or not the message is relayed.
        let source = message.source.transport
        var work = RelayWork(message: message, router: self.routing.router, proposal: PagingProposal(notificationKey: notificationKey))
        if let key = notificationKey { work.bookkeeping.append(self.acceptedEntry(key, id: message.id)) }
        if let sequence = message.sourceSequence { work.bookkeeping.append(.sourcePosition(transport: source, sequence: sequence)) }
        if let point = message.resumePoint { work.bookkeeping.append(.resumePoint(key: point.storageKey(transport: source), position: point.position)) }
        // 2. Repeat and echo checks.
        if case .stop(let reason) = self.repeats.run(&work) { return self.stopped(work, reason) }
        if await self.isEcho(message.id) { return self.stopped(work, .echo) }
        // A paged recipient's acknowledgement or command is the bridge's (issue 24).
        if self.readForPaging(message) { return self.stopped(work, nil) }
        // 3. Route.
        work.references = await self.references(for: message)
        let routed = self.routing.run(&work)
        if message.content.encryption != nil { self.noticeEncrypted(message) }
        if case .stop(let reason) = routed { return self.stopped(work, reason) }
        // Paging (issue 24): what it changes is taken into memory once committed.
        self.paging.resolve(&work)
        // 4. Split what would exceed a target's stanza limit; what waits is postponed.
        _ = self.splitting.run(&work)
        _ = self.paging.run(&work)
        work.bookkeeping += work.proposal.entries
        // 5. Room in every target queue, else wait (the source stops reading meanwhile).
        for (transport, group) in Dictionary(grouping: work.deliveries, by: \.target.transport) {
            while let worker = self.targetTable.workers[transport], !worker.hasRoom(for: group) {
                self.logger.debug("queue full; intake waits", metadata: ["transport": "\(transport)"])
                await worker.waitForRoom()
            }
        }
        // 6. Journal: durable before anything else sees it. The commit's completion runs on
        //    the journal's thread and hands the deliveries to the workers there (7), in
        //    commit order.
        work.now = Date()
        guard let entries = self.sequenced(work.deliveries, at: work.now) else { return nil }
        // The source's position moves in the same commit (a resumed stream then resends only
        // the rest; a repeat of this message is recognised).
        // The room's stanza-id of a room message goes on the id map rows these enqueues
        // insert (issue 12): after them.
        if let stanzaID = message.stanzaID {
            work.bookkeeping.append(.sourceStanzaID(source: message.source, sourceID: message.id, stanzaID: stanzaID))
        }
        // Archived under the routing table in effect now (a reload may have come meanwhile).
        work.router = self.routing.router
        _ = self.archiving.run(&work)
        guard message.awaitsCommit else {
            // Bound what is handed over but not yet committed.
            while self.journal.backlog > Self.maximumBacklog { await self.journal.flushed() }
            self.appendUncommitted(entries, with: work.bookkeeping)
            self.takeIn(work.proposal)
            return nil
        }
        do {
            try await self.journal.commit(entries.map { .enqueue($0.delivery, enqueuedAt: work.now, attempts: 0) } + work.bookkeeping)
        } catch {
            self.logger.error("cannot queue deliveries; message not relayed", metadata: ["error": "\(error)"])
            // Not handled after all: a retry with the same key (Idempotency-Key) is new.
            if let key = message.deduplicationKey { self.repeats.forget(key, from: source) }
            return .stateError
        }
        self.takeIn(work.proposal)
        // 7. Queue, to the workers running now (one may have been replaced meanwhile).
        self.enqueue(entries)
        return nil
    }

    /// A message no stage let through: its bookkeeping is still committed (the source's
    /// position, its key); `reason` nil when the bridge took it itself.
    private func stopped(_ work: RelayWork, _ reason: DropReason?) -> DropReason? {
        switch reason {
        case .alreadyHandled:
            self.logger.debug(
                "message handed over again (same deduplication key); relayed once",
                metadata: ["from": "\(work.message.source)", "key": "\(work.message.deduplicationKey ?? "-")"]
            )
        case .echo:
            self.logger.debug("echo of a message we relayed; not relayed again", metadata: ["id": "\(work.message.id)"])
        case .some(let reason):
            // Strangers and non-members are never relayed (no open relay).
            self.logger.debug("not relayed", metadata: ["from": "\(work.message.source)", "reason": "\(reason)"])
        case nil:
            break
        }
        self.journal.record(work.bookkeeping)
        return reason
    }

    /// `deliveries` with their queue sequences, their relay ids remembered for echo checks;
    /// nil when the journal is closed.
    package func sequenced(_ deliveries: [Delivery], at now: Date) -> [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]? {
        // None (every one held back): the commit still carries the message's bookkeeping.
        guard !deliveries.isEmpty else { return [] }
        guard let sequences = self.journal.assignSequences(deliveries.count) else { return nil }
        var deliveries = deliveries
        for (offset, sequence) in sequences.enumerated() {
            deliveries[offset].sequence = sequence
            self.repeats.relayed(deliveries[offset].relayID)
        }
        return deliveries.map { (delivery: $0, enqueuedAt: now, attempts: 0) }
    }

    /// Hands `entries` (and `extra` after them) to the journal's next group commit without
    /// waiting for it. The commit's completion hands them to their workers on the journal's
    /// thread; a worker removed meanwhile has them collected by remove(transport:), which
    /// waits for it. A failed commit still delivers from memory: better late durability
    /// than a lost message.
    package func appendUncommitted(_ entries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)], with extra: [JournalEntry]) {
        let targets = self.targets(for: entries)
        let logger = self.logger
        self.journal.append(entries.map { .enqueue($0.delivery, enqueuedAt: $0.enqueuedAt, attempts: $0.attempts) } + extra) { result in
            if case .failure(let error) = result {
                // Refused by the fencing check: another instance owns the source now and
                // relays the message itself.
                if (error as? StateStoreError)?.isFenced == true { return }
                logger.error("cannot commit deliveries; delivering without durability", metadata: ["error": "\(error)"])
            }
            for (worker, group) in targets { worker.append(group) }
        }
    }

    /// Deliveries whose commit is not yet done, at most, before intake waits for the journal.
    package static var maximumBacklog: Int { 10_000 }

    /// The running workers for `entries`, each with its part; parts for transports that are
    /// not running are parked now.
    package func targets(for entries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]) -> [(Worker, [(delivery: Delivery, enqueuedAt: Date, attempts: Int)])] {
        var targets: [(Worker, [(delivery: Delivery, enqueuedAt: Date, attempts: Int)])] = []
        for (transport, group) in Dictionary(grouping: entries, by: \.delivery.target.transport) {
            let worker = self.targetTable.workers[transport]
            // Another instance runs it: the row is in the shared queue, the commit wakes that one.
            guard self.shared == nil || worker != nil || self.shared!.adopting.contains(transport) else { continue }
            // Sharing the queue, a worker gets each row once (it may have read it back already).
            let group = self.shared == nil ? group : self.shared!.unknown(group, for: transport)
            if let worker {
                if !group.isEmpty { targets.append((worker, group)) }
            } else {
                self.targetTable.parked[transport, default: []] += group
            }
        }
        return targets
    }

    package func enqueue(_ entries: [(delivery: Delivery, enqueuedAt: Date, attempts: Int)]) {
        for (worker, group) in self.targets(for: entries) { worker.append(group) }
    }

    /// Whether `id` is one we relayed: in memory for this process's recent ids, else from
    /// the id map on the journal's thread (only ids with our prefix get that far).
    private func isEcho(_ id: String) async -> Bool {
        if let known = self.repeats.echo(id) { return known }
        do {
            return try await self.journal.read { store throws(StateStoreError) in try store.isRelayID(id) }
        } catch {
            self.logger.error("cannot read the id map", metadata: ["error": "\(error)"])
            return false
        }
    }
}
