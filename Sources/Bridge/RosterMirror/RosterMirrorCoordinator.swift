import Logging
import Transports
import XMPP

/// Keeps `[[roster_mirror]]`s in step: after either account's roster changes (fetched on
/// connect, or pushed), runs ``RosterMirrorReconciler`` against the stored snapshot, applies
/// the changes on the target account, and stores the new snapshot once they are confirmed.
/// Two-way mirrors run both directions, each excluding what the other owns (no ping-pong).
actor RosterMirrorCoordinator: TransportEventHandler {
    private var mirrors: [RosterMirrorConfiguration]
    private let store: StateStore
    private let transport: @Sendable (String) async -> (any Transport)?
    private let logger: Logger
    private var online: Set<String> = []
    private var running: Set<String> = []
    private var dirty: Set<String> = []
    /// Roster sets and removals issued so far (reported by `status`; tests count them).
    private(set) var changesApplied = 0

    init(mirrors: [RosterMirrorConfiguration], store: StateStore, transport: @escaping @Sendable (String) async -> (any Transport)?, logger: Logger) {
        self.mirrors = mirrors
        self.store = store
        self.transport = transport
        self.logger = logger
    }

    func update(mirrors: [RosterMirrorConfiguration]) async {
        self.mirrors = mirrors
        for mirror in mirrors { await self.reconcile(mirror) }
    }

    nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
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
        case .message, .inputFinished, .presence, .ownPresence, .stopped, .bounced:
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
        repeat {
            self.dirty.remove(mirror.id)
            await self.reconcileOnce(mirror)
        } while self.dirty.contains(mirror.id)
    }

    private func reconcileOnce(_ mirror: RosterMirrorConfiguration) async {
        guard let from = await self.transport(mirror.from) as? any RosterKeeping,
            let to = await self.transport(mirror.to) as? any RosterKeeping
        else { return }
        // A roster that was not fetched is unknown, not empty: reconciling against it would
        // remove every mirrored contact.
        guard await from.rosterReady(), await to.rosterReady() else { return }
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
            guard await self.apply(changes, on: to, subscribe: mirror.subscribe, mirror: forwardID) else { return }
            try self.store.saveRosterMirrorSnapshot(newForward, id: forwardID)
            guard mirror.twoWay else { return }
            target = Self.applying(changes, to: target)
            let (reverse, newBackward) = RosterMirrorReconciler.reconcile(
                source: target, target: await from.rosterItems(), snapshot: backward, groups: mirror.groups,
                excluding: newForward.ownedJIDs
            )
            guard await self.apply(reverse, on: from, subscribe: mirror.subscribe, mirror: backwardID) else { return }
            try self.store.saveRosterMirrorSnapshot(newBackward, id: backwardID)
        } catch {
            self.logger.error("roster mirror failed", metadata: ["mirror": "\(forwardID)", "error": "\(error)"])
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
                self.logger.warning("roster change refused; retrying in 30 s", metadata: ["mirror": "\(mirror)", "error": "\(error)"])
                self.scheduleRetry()
                return false
            }
        }
        return true
    }

    private func scheduleRetry() {
        Task {
            try? await Task.sleep(for: .seconds(30))
            for mirror in self.mirrors { await self.reconcile(mirror) }
        }
    }

    /// What `roster` looks like once `changes` are applied (pushes may not have arrived yet).
    static func applying(_ changes: [RosterMirrorChange], to roster: [RosterItem]) -> [RosterItem] {
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
    func owns(_ contact: String, account: String) -> Bool {
        for mirror in self.mirrors {
            for (id, target) in [(mirror.id, mirror.to), ("\(mirror.to)->\(mirror.from)", mirror.from)] where target == account {
                if (try? self.store.rosterMirrorSnapshot(id: id).ownedJIDs.contains(contact.lowercased())) == true { return true }
            }
        }
        return false
    }
}
