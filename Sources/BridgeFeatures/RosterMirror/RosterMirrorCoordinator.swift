import BridgeState
import AccountTransport
import Logging
import TransportCore
import XMPP

/// Keeps `[[roster_mirror]]`s in step: after either account's roster changes (fetched on
/// connect, or pushed), runs ``RosterMirrorReconciler`` against the stored snapshot, applies
/// the changes on the target account, and stores the new snapshot once the server accepted them.
/// Two-way mirrors run both directions, each excluding what the other owns (no ping-pong).
/// A refused change is retried on one ``RosterMirrorRetrySchedule`` (backoff, cap, one
/// timer on the injected clock), never by a task per failure.
package actor RosterMirrorCoordinator<C: Clock>: TransportEventHandler where C.Duration == Duration, C.Instant: Sendable {
    private var mirrors: [RosterMirrorConfiguration]
    private let store: any RosterMirrorStore
    private let capabilities: @Sendable (String) async -> TransportCapabilities
    private let clock: C
    private let logger: Logger
    private var online: Set<String> = []
    private var running: Set<String> = []
    private var dirty: Set<String> = []
    private var retries: RosterMirrorRetrySchedule<C.Instant>
    private var timer: Task<Void, Never>?
    /// Roster sets and removals issued so far (reported by `status`; tests count them).
    package private(set) var changesApplied = 0

    package init(
        mirrors: [RosterMirrorConfiguration], store: any RosterMirrorStore, capabilities: @escaping @Sendable (String) async -> TransportCapabilities,
        clock: C, retry: RosterMirrorRetrySchedule<C.Instant>.Configuration = .init(), logger: Logger
    ) {
        self.mirrors = mirrors
        self.store = store
        self.capabilities = capabilities
        self.clock = clock
        self.retries = RosterMirrorRetrySchedule(configuration: retry)
        self.logger = logger
    }

    /// A reload: pending retries are dropped (every mirror is reconciled now anyway).
    package func update(mirrors: [RosterMirrorConfiguration]) async {
        self.mirrors = mirrors
        self.retries.reset()
        self.armTimer()
        for mirror in mirrors { await self.reconcile(mirror) }
    }

    /// Mirrors waiting for a retry (tests, `status`).
    package var pendingRetries: Int { self.retries.pendingCount }

    /// Reconciliations under way (their failure, and so their next retry, not yet recorded).
    package var reconciling: Int { self.running.count }

    package nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.process(event, from: transport)
        return .accepted
    }

    private func process(_ event: TransportEvent, from account: String) async {
        switch event {
        case .available:
            self.online.insert(account)
        case .unavailable:
            self.online.remove(account)
            return
        case .rosterChanged:
            break
        case .message, .inputFinished, .presence, .ownPresence, .stopped, .bounced, .acknowledgedBeforeRestart, .resumePointMoved, .targetReady, .occupant, .receipt, .copyStanzaID, .subscriptionRequest, .subscriptionApproved,
            .alertAcked:
            return
        }
        // In its own task: the account's other events (messages) must not wait for the network.
        for mirror in self.mirrors where mirror.from == account || mirror.to == account {
            Task { await self.reconcile(mirror) }
        }
    }

    /// One reconciliation of `mirror`; a change arriving meanwhile runs another afterwards.
    private func reconcile(_ mirror: RosterMirrorConfiguration) async {
        guard self.online.contains(mirror.from), self.online.contains(mirror.to) else { return }
        guard self.running.insert(mirror.id).inserted else {
            self.dirty.insert(mirror.id)
            return
        }
        defer { self.running.remove(mirror.id) }
        var succeeded = true
        repeat {
            self.dirty.remove(mirror.id)
            succeeded = await self.reconcileOnce(mirror)
        } while self.dirty.contains(mirror.id)
        if succeeded {
            self.retries.succeeded(mirror.id)
        } else {
            let at = self.retries.failed(mirror.id, now: self.clock.now)
            self.logger.warning("roster mirror will retry", metadata: ["mirror": "\(mirror.id)", "in": "\(self.clock.now.duration(to: at))"])
        }
        self.armTimer()
    }

    /// One timer, for the earliest pending retry.
    private func armTimer() {
        self.timer?.cancel()
        self.timer = nil
        guard let deadline = self.retries.nextDeadline else { return }
        let clock = self.clock
        self.timer = Task {
            guard (try? await clock.sleep(until: deadline, tolerance: nil)) != nil else { return }
            await self.retryDue()
        }
    }

    private func retryDue() async {
        let due = Set(self.retries.due(now: self.clock.now))
        for mirror in self.mirrors where due.contains(mirror.id) {
            await self.reconcile(mirror)
        }
        self.armTimer()
    }

    /// False when a change was refused (the snapshot is not saved; retried later).
    private func reconcileOnce(_ mirror: RosterMirrorConfiguration) async -> Bool {
        guard let from = await self.capabilities(mirror.from).roster,
            let to = await self.capabilities(mirror.to).roster
        else { return true }
        // A roster that was not fetched is unknown, not empty: reconciling against it would
        // remove every mirrored contact.
        guard await from.rosterReady(), await to.rosterReady() else { return true }
        let forwardID = mirror.id
        let backwardID = "\(mirror.to)->\(mirror.from)"
        do {
            let backward = mirror.twoWay ? try self.store.rosterMirrorSnapshot(id: backwardID) : RosterMirrorSnapshot()
            var target = await to.rosterItems()
            let forward = try self.store.rosterMirrorSnapshot(id: forwardID)
            let (changes, newForward) = RosterMirrorReconciler.reconcile(
                source: await from.rosterItems(), target: target, snapshot: forward, groups: mirror.groups,
                excluding: mirror.twoWay ? backward.ownedJIDs : []
            )
            guard await self.apply(changes, on: to, subscribe: mirror.subscribe, mirror: forwardID) else { return false }
            try self.store.saveRosterMirrorSnapshot(newForward, id: forwardID)
            guard mirror.twoWay else { return true }
            target = Self.applying(changes, to: target)
            let (reverse, newBackward) = RosterMirrorReconciler.reconcile(
                source: target, target: await from.rosterItems(), snapshot: backward, groups: mirror.groups,
                excluding: newForward.ownedJIDs
            )
            guard await self.apply(reverse, on: from, subscribe: mirror.subscribe, mirror: backwardID) else { return false }
            try self.store.saveRosterMirrorSnapshot(newBackward, id: backwardID)
            return true
        } catch {
            self.logger.error("roster mirror failed", metadata: ["mirror": "\(forwardID)", "error": "\(error)"])
            return false
        }
    }

    /// Applies changes in order; false (snapshot not saved, retried next time) if one failed.
    private func apply(_ changes: [RosterMirrorChange], on account: any RosterKeeping, subscribe: Bool, mirror: String) async -> Bool {
        for change in changes {
            do {
                switch change {
                case .set(let item):
                    try await account.setRosterItem(item, subscribe: subscribe)
                    self.logger.info("roster mirror set", metadata: ["mirror": "\(mirror)", "contact": "\(item.jid)"])
                case .remove(let jid):
                    try await account.removeRosterItem(jid)
                    self.logger.info("roster mirror removed", metadata: ["mirror": "\(mirror)", "contact": "\(jid)"])
                }
                self.changesApplied += 1
            } catch {
                self.logger.warning("roster change refused", metadata: ["mirror": "\(mirror)", "error": "\(error)"])
                return false
            }
        }
        return true
    }

    /// What `roster` looks like once `changes` are applied (pushes may not have arrived yet).
    package static func applying(_ changes: [RosterMirrorChange], to roster: [RosterItem]) -> [RosterItem] {
        var items = Dictionary(roster.map { ($0.jid, $0) }, uniquingKeysWith: { first, _ in first })
        for change in changes {
            switch change {
            case .set(let item):
                var updated = items[item.jid] ?? item
                updated.name = item.name
                updated.groups = item.groups
                items[item.jid] = updated
            case .remove(let jid):
                items[jid] = nil
            }
        }
        return Array(items.values)
    }

    /// Whether the mirror named `id` created `contact` on its target (for `roster`).
    package func owns(_ contact: String, account: String) -> Bool {
        for mirror in self.mirrors {
            for (id, target) in [(mirror.id, mirror.to), ("\(mirror.to)->\(mirror.from)", mirror.from)] where target == account {
                if (try? self.store.rosterMirrorSnapshot(id: id).ownedJIDs.contains(contact.lowercased())) == true { return true }
            }
        }
        return false
    }
}
