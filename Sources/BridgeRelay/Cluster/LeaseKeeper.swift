import BridgeState
import Foundation
import Logging
import NIOPosix
import ServiceLifecycle

/// Keeps this instance's leases (issue 26): one ``LeaseStateMachine`` per leased resource
/// (account, gateway, FIFO, socket or stdio local), run against the ``LeaseTable`` on a
/// thread and connection of its own, so no database call waits on an event loop or the
/// Swift pool. It sends the instance's heartbeat, takes free leases up to its fair share
/// (``FairShare``, live instances by heartbeat), gives back what is over it, starts a
/// resource's work when its lease is granted and stops it the moment the lease may be gone
/// (self-fencing), and on graceful shutdown stops its work and gives every lease back, so
/// another instance takes over at once instead of after `lease_ttl`.
package final class LeaseKeeper: Service {
    package typealias Machine = LeaseStateMachine<ContinuousClock.Instant>

    private let connect: @Sendable () throws(PostgresError) -> PostgresConnection
    private let book: LeaseBook
    private let configuration: Machine.Configuration
    /// The resources leased now (the configuration can change on reload).
    private let resources: @Sendable () async -> [String]
    /// Starts the work on a resource whose lease was granted, given how long its former
    /// owner had been silent (nil: none); false when it cannot (it is given back).
    private let start: @Sendable (String, Duration?) async -> Bool
    /// Stops the work on a resource: its lease is lost (`true`) or about to be given back.
    private let stop: @Sendable (String, _ lost: Bool) async -> Void
    private let clock = ContinuousClock()
    private let logger: Logger
    private let thread = NIOThreadPool(numberOfThreads: 1)
    /// Used on ``thread`` only; nil until connected, or after it broke.
    private nonisolated(unsafe) var table: LeaseTable?

    package init(
        connect: @escaping @Sendable () throws(PostgresError) -> PostgresConnection, book: LeaseBook, ttl: Duration,
        resources: @escaping @Sendable () async -> [String], start: @escaping @Sendable (String, Duration?) async -> Bool,
        stop: @escaping @Sendable (String, _ lost: Bool) async -> Void, logger: Logger
    ) {
        self.connect = connect
        self.book = book
        self.configuration = Machine.Configuration(ttl: ttl)
        self.resources = resources
        self.start = start
        self.stop = stop
        self.logger = logger
    }

    package func run() async throws {
        self.thread.start()
        var machines: [String: Machine] = [:]
        var live = 1
        var nextHeartbeat = self.clock.now
        // Instances started together see each other's heartbeat before taking leases, so
        // the first does not take everything and give most of it back.
        if let count = await self.call({ table throws(PostgresError) in try Self.beat(table, self.book.instance, window: self.configuration.ttl) }) {
            live = count
        }
        try? await self.clock.sleep(for: min(self.configuration.renewEvery, .seconds(2)))
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let now = self.clock.now
            if now >= nextHeartbeat {
                if let count = await self.call({ table throws(PostgresError) in try Self.beat(table, self.book.instance, window: self.configuration.ttl) }) {
                    live = count
                }
                nextHeartbeat = now.advanced(by: self.configuration.renewEvery)
            }
            let wanted = Set(await self.resources())
            self.book.leased = wanted
            for name in wanted where machines[name] == nil { machines[name] = Machine(configuration: self.configuration, now: now) }
            for name in machines.keys where !wanted.contains(name) {
                await self.giveBack(name, &machines)
                machines.removeValue(forKey: name)
            }
            await self.tick(&machines, live: &live)
            let deadline = machines.values.compactMap(\.nextDeadline).min().map { min($0, nextHeartbeat) } ?? nextHeartbeat
            try? await self.clock.sleep(until: max(deadline, self.clock.now.advanced(by: .milliseconds(50))))
        }
        // Graceful shutdown: work stops, then every lease goes back at once.
        await self.giveBack(machines.keys.sorted(), &machines)
        try? await self.thread.shutdownGracefully()
    }

    /// One round: timers fired, acquisitions (up to the fair share) and renewals sent, each
    /// as one statement for all resources, answers applied, work started or stopped.
    private func tick(_ machines: inout [String: Machine], live: inout Int) async {
        let now = self.clock.now
        var held = machines.values.count { if case .held = $0.state { true } else { false } }
        var acquiring: [String] = []
        var renewing: [String: Int64] = [:]
        for name in machines.keys.sorted() {
            for action in machines[name]!.timerFired(now: now) {
                switch action {
                case .acquire:
                    acquiring.append(name)
                case .renew(let epoch):
                    renewing[name] = epoch
                case .fence:
                    held -= 1
                    await self.lost(name)
                case .start, .release:
                    break
                }
            }
        }
        if !acquiring.isEmpty {
            // The live instances counted now, so the share of one that just died is taken
            // at once; the free leases among those asked for, up to the share.
            let (asked, total, alreadyHeld, window) = (acquiring, machines.count, held, self.configuration.ttl)
            let answer = await self.call { table throws(PostgresError) -> (live: Int, granted: [String: LeaseTable.Taken]) in
                let live = try table.liveInstances(within: window).count
                let room = FairShare.limit(resources: total, liveInstances: live) - alreadyHeld
                return (live, try table.acquire(asked, owner: self.book.instance, ttl: window, atMost: room))
            }
            if let answer { live = max(answer.live, 1) }
            let granted = answer?.granted
            let answered = self.clock.now
            for name in acquiring {
                guard let granted else {
                    _ = machines[name]!.requestFailed(now: answered)
                    continue
                }
                guard let epoch = granted[name]?.epoch else {
                    _ = machines[name]!.taken(now: answered)
                    continue
                }
                if machines[name]!.acquired(epoch: epoch, now: answered).contains(.start(epoch: epoch)) {
                    self.publish(name, machines[name]!)
                    self.logger.info("lease taken; starting", metadata: ["resource": "\(name)", "epoch": "\(epoch)"])
                    if await !self.start(name, granted[name]?.formerOwnerSilence) {
                        await self.giveBack(name, &machines)
                    }
                }
            }
        }
        if !renewing.isEmpty {
            let claims = renewing
            let renewed = await self.call { table throws(PostgresError) in try table.renew(claims, owner: self.book.instance, ttl: self.configuration.ttl) }
            let answered = self.clock.now
            for name in renewing.keys.sorted() {
                guard let renewed else {
                    _ = machines[name]!.requestFailed(now: answered)
                    continue
                }
                if renewed.contains(name) {
                    _ = machines[name]!.renewed(now: answered)
                    self.publish(name, machines[name]!)
                } else if machines[name]!.renewalRefused(now: answered).contains(.fence) {
                    self.logger.warning("lease taken by another instance; stopped here", metadata: ["resource": "\(name)"])
                    await self.lost(name)
                }
            }
        }
        // Over the fair share (another instance came up): the surplus goes back.
        let holding = machines.filter { if case .held = $0.value.state { true } else { false } }.keys.sorted()
        let surplus = Array(holding.dropFirst(FairShare.limit(resources: machines.count, liveInstances: live)))
        if !surplus.isEmpty {
            self.logger.info("leases given back: more than this instance's fair share", metadata: ["count": "\(surplus.count)", "first": "\(surplus[0])"])
            await self.giveBack(surplus, &machines)
        }
    }

    /// The lease may be gone: work stops at once.
    private func lost(_ name: String) async {
        self.book.revoke(name)
        await self.stop(name, true)
    }

    /// Stops the work on `name` (its last commits made while the lease still holds), then
    /// gives the lease back; asked for again only a ttl later, so another instance takes it.
    private func giveBack(_ name: String, _ machines: inout [String: Machine]) async {
        await self.giveBack([name], &machines)
    }

    /// ``giveBack(_:_:)`` for several at once: their work stopped side by side, then every
    /// lease given back in one statement (a surplus of hundreds goes in seconds).
    private func giveBack(_ names: [String], _ machines: inout [String: Machine]) async {
        let running = names.filter { name in if case .held = machines[name]?.state { true } else { false } }
        await withTaskGroup(of: Void.self) { group in
            for name in running { group.addTask { await self.stop(name, false) } }
        }
        var claims: [String: Int64] = [:]
        for name in names {
            guard var machine = machines[name] else { continue }
            self.book.revoke(name)
            for case .release(let epoch) in machine.release() { claims[name] = epoch }
            machines[name] = Machine(configuration: self.configuration, now: self.clock.now.advanced(by: self.configuration.ttl))
        }
        if !claims.isEmpty {
            let given = claims
            _ = await self.call { table throws(PostgresError) in try table.release(given, owner: self.book.instance) }
        }
    }

    /// Every instance with its heartbeat, and each lease's owner, from the database; nil
    /// when it cannot be read.
    package func view() async -> ClusterView? {
        let window = self.configuration.ttl
        let instance = self.book.instance
        return await self.call { table throws(PostgresError) in
            ClusterView(
                this: instance, instances: try table.instances(within: window).map { ClusterView.Instance(name: $0.name, heartbeat: $0.heartbeat, alive: $0.alive) },
                owners: try table.owners()
            )
        }
    }

    /// What the book says about `name`: the machine's grant while it holds the lease.
    private func publish(_ name: String, _ machine: Machine) {
        if case .held(let epoch, let validUntil, _, _) = machine.state {
            self.book.grant(name, LeaseBook.Grant(epoch: epoch, validUntil: validUntil))
        }
    }

    /// Records the heartbeat; how many instances are alive.
    private static func beat(_ table: LeaseTable, _ instance: String, window: Duration) throws(PostgresError) -> Int {
        try table.heartbeat(instance)
        return try table.liveInstances(within: window).count
    }

    /// Runs `body` on the keeper's thread with its connection (made anew after a failure);
    /// nil when it failed (logged).
    private func call<T: Sendable>(_ body: @escaping @Sendable (LeaseTable) throws(PostgresError) -> T) async -> T? {
        let result: Result<T, PostgresError>? = try? await self.thread.runIfActive {
            do throws(PostgresError) {
                let table: LeaseTable
                if let existing = self.table {
                    table = existing
                } else {
                    table = LeaseTable(connection: try self.connect())
                    self.table = table
                }
                return .success(try body(table))
            } catch {
                if self.table?.connection.isOpen != true { self.table = nil }
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error):
            self.logger.warning("lease request failed", metadata: ["error": "\(error)"])
            return nil
        case nil: return nil
        }
    }
}
