import AccountTransport
import Foundation
import Logging
import NIOConcurrencyHelpers
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeFeatures
@testable import BridgeState

/// Roster mirror retries (issue 13, defect 3): one schedule with backoff and a cap, one
/// timer, cancelled on reload; failing mirrors never multiply retry tasks.
@Suite("Roster mirror retries")
struct RosterMirrorRetryTests {
    typealias Schedule = RosterMirrorRetrySchedule<ManualClock.Instant>
    static let t0 = ManualClock.Instant()

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    @Test("backoff per mirror doubles from 30 s to the cap; success forgets; reset clears")
    func schedule() {
        var schedule = Schedule(configuration: .init(initialDelay: .seconds(30), maximumDelay: .seconds(100)))
        #expect(schedule.failed("a", now: Self.t0) == Self.at(30))
        #expect(schedule.failed("b", now: Self.at(10)) == Self.at(40))
        #expect(schedule.nextDeadline == Self.at(30))
        #expect(schedule.due(now: Self.at(29)).isEmpty)
        #expect(schedule.failed("b", now: Self.at(20)) == Self.at(40), "a failure before the retry leaves it")
        #expect(schedule.due(now: Self.at(30)) == ["a"])
        #expect(schedule.nextDeadline == Self.at(40))
        #expect(schedule.failed("a", now: Self.at(30)) == Self.at(90))
        #expect(schedule.failed("a", now: Self.at(90)) == Self.at(190))
        #expect(schedule.failed("a", now: Self.at(190)) == Self.at(290))  // capped at 100 s
        schedule.succeeded("a")
        #expect(schedule.pendingCount == 1)
        #expect(schedule.failed("a", now: Self.at(300)) == Self.at(330))  // starts over
        schedule.reset()
        #expect(schedule.nextDeadline == nil)
    }

    /// An account whose roster refuses every change, counting the attempts.
    final class RefusingAccount: Transport, RosterKeeping, Sendable {
        let name: String
        private let attempts = NIOLockedValueBox(0)
        let items: [RosterItem]

        init(name: String, items: [RosterItem] = []) {
            self.name = name
            self.items = items
        }

        var attemptCount: Int { self.attempts.withLockedValue { $0 } }

        func run() async throws {}
        func stop() async {}
        func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] { deliveries.map { _ in .delivered } }
        func rosterReady() async -> Bool { true }
        func rosterItems() async -> [RosterItem] { self.items }
        func contactPresence(_ jid: JID) async -> PresenceState { .unavailable }

        func setRosterItem(_ item: RosterItem, subscribe: Bool) async throws {
            self.attempts.withLockedValue { $0 += 1 }
            throw XMPPSessionError.notConnected
        }

        func removeRosterItem(_ jid: JID) async throws {
            self.attempts.withLockedValue { $0 += 1 }
            throw XMPPSessionError.notConnected
        }

        func approveSubscription(of contact: JID) async throws {
            self.attempts.withLockedValue { $0 += 1 }
            throw XMPPSessionError.notConnected
        }
    }

    @Test("two failing mirrors: one retry each per backoff step, not a doubling swarm; a reload cancels them")
    func failingMirrorsDoNotMultiply() async throws {
        let clock = ManualClock()
        let contact = RosterItem(jid: try JID("carol@c.example"), name: "Carol", subscription: .both)
        let sources = [RefusingAccount(name: "a", items: [contact]), RefusingAccount(name: "b", items: [contact])]
        let targets = [RefusingAccount(name: "x"), RefusingAccount(name: "y")]
        let accounts = Dictionary(uniqueKeysWithValues: (sources + targets).map { ($0.name, $0) })
        let mirrors = [
            RosterMirrorConfiguration(from: "a", to: "x", groups: nil, twoWay: false, subscribe: false),
            RosterMirrorConfiguration(from: "b", to: "y", groups: nil, twoWay: false, subscribe: false),
        ]
        let coordinator = RosterMirrorCoordinator(
            mirrors: mirrors, store: try SQLiteStateStore.inMemory(), capabilities: { TransportCapabilities(roster: accounts[$0]) }, clock: clock, logger: Logger(label: "mirror-test")
        )
        // Coming online reconciles both mirrors; both fail.
        for name in ["a", "b", "x", "y"] { _ = await coordinator.handle(.available, from: name) }
        try await Self.until { await coordinator.pendingRetries == 2 }
        try await Self.until { await coordinator.reconciling == 0 }
        await Self.untilSleeping(clock)
        let base = targets.map(\.attemptCount)
        #expect(base.allSatisfy { $0 >= 1 })

        for (step, seconds) in [30, 60, 120].enumerated() {
            await Self.untilSleeping(clock)
            #expect(clock.sleeperCount == 1, "one timer for all mirrors")
            clock.advance(by: .seconds(seconds))
            try await Self.until { targets.map(\.attemptCount) == base.map { $0 + step + 1 } }
            // An attempt is counted before its failure schedules the next retry: time moves
            // on only once both are recorded.
            try await Self.until { await coordinator.reconciling == 0 }
        }
        await Self.untilSleeping(clock)
        #expect(clock.sleeperCount == 1)

        // A reload reconciles at once and forgets the old schedule.
        await coordinator.update(mirrors: [])
        #expect(await coordinator.pendingRetries == 0)
        try await Self.until { clock.sleeperCount == 0 }
        #expect(targets.map(\.attemptCount) == base.map { $0 + 3 })
    }

    static func untilSleeping(_ clock: ManualClock) async {
        await clock.waitForSleepers()
    }

    static func until(_ condition: () async throws -> Bool) async throws {
        if try await !untilTrue(condition) { Issue.record("condition not reached") }
    }
}
