import BridgeState
import Foundation
import NIOConcurrencyHelpers
import TransportCore

/// Where a message from a local input has got to (``MessageDeliveryStatus``), from the id
/// map (its copies, their receipts), the queues in memory (still queued) and the dead
/// letters (failed); and `?wait=sent`, woken by the delivery workers when a copy of a
/// watched message leaves its queue.
package final class DeliveryStatusBook<C: Clock>: DeliveryStatusProviding where C.Duration == Duration, C.Instant: Sendable {
    private struct Watch {
        var generation = 0
        var watchers = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let store: any RelayMapStore & DeadLetterStore
    /// Where the id map is read: the journal's thread, never the HTTP ingress's event loop
    /// (nil: on the caller's thread, for tests without a journal).
    private let journal: Journal?
    /// Which of these relay ids are still queued (the pipeline), and the XMPP transports'
    /// names (their copies decide the overall state); attached once both exist.
    private let sources = NIOLockedValueBox<(queued: @Sendable (Set<String>) async -> Set<String>, accounts: @Sendable () async -> Set<String>)>(
        ({ _ in [] }, { [] })
    )
    /// The page of a message of a paging channel (issue 24), from the pipeline.
    private let pages = NIOLockedValueBox<@Sendable (_ source: String, _ id: String) async -> Page?>({ _, _ in nil })
    private let watches = NIOLockedValueBox<(entries: [String: Watch], nextWaiter: Int)>(([:], 0))
    private let clock: C
    /// Copies that became dead letters lately, by relay id, with the reason: known here at
    /// once, before the journal has written the dead letter (a waiter woken by the failure
    /// reads it from here, not a stale database).
    private let recentFailures = NIOLockedValueBox<(reasons: [String: String], order: [String])>(([:], []))
    private static var failureMemory: Int { 10_000 }

    package init(store: any RelayMapStore & DeadLetterStore, journal: Journal? = nil, clock: C) {
        self.store = store
        self.journal = journal
        self.clock = clock
    }

    package func attach(queued: @escaping @Sendable (Set<String>) async -> Set<String>, accounts: @escaping @Sendable () async -> Set<String>) {
        self.sources.withLockedValue { $0 = (queued, accounts) }
    }

    package func attach(pages: @escaping @Sendable (_ source: String, _ id: String) async -> Page?) {
        self.pages.withLockedValue { $0 = pages }
    }

    private static func key(_ source: String, _ id: String) -> String { "\(source)\u{0}\(id)" }

    /// Copies left their queues, delivered or `failed` (with the reason): wakes whoever
    /// waits for their messages.
    package func settled(_ deliveries: [Delivery], failed: [(Delivery, String)] = []) {
        if !failed.isEmpty {
            self.recentFailures.withLockedValue { memory in
                for (delivery, reason) in failed where memory.reasons.updateValue(reason, forKey: delivery.relayID) == nil {
                    memory.order.append(delivery.relayID)
                }
                if memory.order.count > Self.failureMemory {
                    let excess = memory.order.count - Self.failureMemory
                    for id in memory.order.prefix(excess) { memory.reasons.removeValue(forKey: id) }
                    memory.order.removeFirst(excess)
                }
            }
        }
        let deliveries = deliveries + failed.map(\.0)
        let waiting = self.watches.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard !state.entries.isEmpty else { return [] }
            var resumed: [CheckedContinuation<Void, Never>] = []
            for delivery in deliveries {
                let key = Self.key(delivery.source.transport, delivery.sourceID)
                guard state.entries[key] != nil else { continue }
                state.entries[key]?.generation += 1
                resumed += state.entries[key]?.waiters.values ?? [:].values
                state.entries[key]?.waiters.removeAll()
            }
            return resumed
        }
        for waiter in waiting { waiter.resume() }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (any RelayMapStore & DeadLetterStore) throws(StateStoreError) -> T) async throws(StateStoreError) -> T {
        if let journal { return try await journal.read { store throws(StateStoreError) in try body(store) } }
        return try body(self.store)
    }

    package func status(ofMessage id: String, from source: String) async -> MessageDeliveryStatus? {
        let relays: [RelayRecord]
        let dead: [String: String]
        do {
            let read = try await self.read { store throws(StateStoreError) in
                let relays = try store.relays(forSource: source, address: nil, id: id)
                return (relays, try store.deadLetterReasons(relayIDs: relays.map(\.relayID)))
            }
            relays = read.0
            let remembered = self.recentFailures.withLockedValue { memory in
                relays.compactMap { relay in memory.reasons[relay.relayID].map { (relay.relayID, $0) } }
            }
            dead = read.1.merging(remembered) { stored, _ in stored }
        } catch {
            return nil
        }
        guard let first = relays.first else { return nil }
        let sources = self.sources.withLockedValue { $0 }
        let stillQueued = await sources.queued(Set(relays.map(\.relayID)))
        let accounts = await sources.accounts()
        // Split deliveries (parts of one message to one target) show as one target, at the
        // state of the least advanced part.
        var order: [String] = []
        var byTarget: [String: MessageDeliveryStatus.Target] = [:]
        for relay in relays {
            let target = relay.target.description
            var state: MessageDeliveryStatus.State
            if dead[relay.relayID] != nil {
                state = .failed
            } else if stillQueued.contains(relay.relayID) {
                state = .queued
            } else if relay.displayedAt != nil {
                state = .displayed
            } else if relay.receivedAt != nil {
                state = .received
            } else {
                state = .sent
            }
            if let existing = byTarget[target] {
                state = min(state, existing.state)
            } else {
                order.append(target)
            }
            byTarget[target] = MessageDeliveryStatus.Target(target: target, state: state, error: dead[relay.relayID] ?? byTarget[target]?.error)
        }
        let targets = order.compactMap { byTarget[$0] }
        let overall = MessageDeliveryStatus.overall(targets) { target in
            accounts.contains(String(target.target.prefix { $0 != ":" }))
        }
        var status = MessageDeliveryStatus(id: id, channel: first.channel, state: overall, targets: targets)
        if let page = await self.pages.withLockedValue({ $0 })(source, id) {
            status.priority = page.priority
            status.ack = page.ack
            status.escalations = page.escalations
        }
        return status
    }

    package func waitUntilSent(message id: String, from source: String, timeout: Duration) async -> MessageDeliveryStatus? {
        let key = Self.key(source, id)
        let deadline = self.clock.now.advanced(by: timeout)
        var generation = self.watches.withLockedValue { state in
            state.entries[key, default: Watch()].watchers += 1
            return state.entries[key]?.generation ?? 0
        }
        defer {
            self.watches.withLockedValue { state in
                state.entries[key]?.watchers -= 1
                if state.entries[key]?.watchers == 0 { state.entries.removeValue(forKey: key) }
            }
        }
        while true {
            let status = await self.status(ofMessage: id, from: source)
            guard let status, status.targets.contains(where: { $0.state == .queued }), self.clock.now < deadline, !Task.isCancelled else { return status }
            generation = await self.change(of: key, after: generation, deadline: deadline)
        }
    }

    /// Returns once `key` changed after `generation` or at `deadline`; the generation then.
    private func change(of key: String, after generation: Int, deadline: C.Instant) async -> Int {
        let waiter = self.watches.withLockedValue { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task {
            try? await self.clock.sleep(until: deadline, tolerance: nil)
            let pending = self.watches.withLockedValue { $0.entries[key]?.waiters.removeValue(forKey: waiter) }
            pending?.resume()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = self.watches.withLockedValue { state -> Bool in
                    if state.entries[key]?.generation != generation || self.clock.now >= deadline || Task.isCancelled { return true }
                    state.entries[key]?.waiters[waiter] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            self.watches.withLockedValue { $0.entries[key]?.waiters.removeValue(forKey: waiter) }?.resume()
        }
        return self.watches.withLockedValue { $0.entries[key]?.generation ?? generation }
    }
}
