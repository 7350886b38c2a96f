import Foundation
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay

/// The in-memory delivery queue as a pure machine (issue 8): per-target order, one batch in
/// flight, attempts with backoff, dead letters, bounces, capacity — time from a manual clock.
@Suite("DeliveryQueue")
struct DeliveryQueueTests {
    typealias Queue = DeliveryQueue<ManualClock.Instant>
    static let t0 = ManualClock.Instant()

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    static func delivery(_ sequence: Int64, to address: String = "bob@b.example", body: String = "hi") -> Delivery {
        Delivery(
            sequence: sequence, channel: "link", target: Endpoint(transport: "home", address: address), body: body, originalBody: body,
            nick: "alice", type: .chat, source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "s-\(sequence)",
            relayID: "r-\(sequence)"
        )
    }

    static func queue(_ sequences: [Int64], configuration: Queue.Configuration = .init(batchSize: 10, maxAttempts: 3), to address: (Int64) -> String = { _ in "bob@b.example" }) -> Queue {
        var queue = Queue(configuration: configuration)
        for sequence in sequences { queue.append(Self.delivery(sequence, to: address(sequence)), enqueuedAt: Date()) }
        queue.setAvailable(true)
        return queue
    }

    @Test("nothing is taken while the transport is unavailable; then in order, one batch at a time")
    func availabilityAndOrder() {
        var queue = Self.queue([1, 2, 3])
        queue.setAvailable(false)
        #expect(queue.next(now: Self.t0) == .idle)
        queue.setAvailable(true)
        #expect(queue.next(now: Self.t0) == .deliver([1, 2, 3].map { Self.delivery($0) }))
        // The batch is in flight: no second one.
        #expect(queue.next(now: Self.t0) == .idle)
        let outcome = queue.finished([1, 2, 3].map { Self.delivery($0) }, results: [.delivered, .delivered, .delivered], now: Self.t0)
        #expect(outcome.delivered == 3)
        #expect(queue.isEmpty)
        #expect(queue.items.isEmpty)
        #expect(queue.next(now: Self.t0) == .idle)
    }

    @Test("batches are at most batchSize")
    func batchSize() {
        var queue = Self.queue([1, 2, 3], configuration: .init(batchSize: 2))
        #expect(queue.next(now: Self.t0) == .deliver([1, 2].map { Self.delivery($0) }))
    }

    @Test("retry later charges the first unconfirmed delivery, which backs off 1, 2 s, then becomes a dead letter")
    func attemptsBackoffAndDeadLetter() {
        var queue = Self.queue([1, 2])
        var batch = [1, 2].map { Self.delivery($0) }
        #expect(queue.next(now: Self.t0) == .deliver(batch))
        var outcome = queue.finished(batch, results: [.retryLater("offline"), .retryLater("offline")], now: Self.t0)
        #expect(outcome.retried == 1)
        #expect(queue.pending.map(\.attempts) == [1, 0])
        // Same target: the second waits behind the first.
        #expect(queue.next(now: Self.t0) == .wait(until: Self.at(1)))
        #expect(queue.next(now: Self.at(1)) == .deliver(batch))
        _ = queue.finished(batch, results: [.retryLater("offline"), .retryLater("offline")], now: Self.at(1))
        #expect(queue.next(now: Self.at(2)) == .wait(until: Self.at(3)))
        batch = [1, 2].map { Self.delivery($0) }
        #expect(queue.next(now: Self.at(3)) == .deliver(batch))
        outcome = queue.finished(batch, results: [.retryLater("still offline"), .retryLater("still offline")], now: Self.at(3))
        #expect(outcome.deadLetters.map(\.delivery.sequence) == [1])
        #expect(outcome.deadLetters.first?.reason == "gave up after 3 attempts: still offline")
        #expect(queue.count == 1)
        #expect(queue.next(now: Self.at(3)) == .deliver([Self.delivery(2)]))
    }

    @Test("a target waiting out a backoff does not hold up other targets")
    func otherTargetsGoOn() {
        var queue = Self.queue([1, 2, 3], to: { $0 == 2 ? "carol@c.example" : "bob@b.example" })
        let batch = [Self.delivery(1), Self.delivery(2, to: "carol@c.example"), Self.delivery(3)]
        #expect(queue.next(now: Self.t0) == .deliver(batch))
        _ = queue.finished(batch, results: [.retryLater("recipient busy"), .delivered, .delivered], now: Self.t0)
        // 3 was answered delivered, but it was in the same batch; 1 alone waits.
        #expect(queue.pending.map(\.delivery.sequence) == [1])
        queue.append(Self.delivery(4, to: "carol@c.example"), enqueuedAt: Date())
        queue.append(Self.delivery(5), enqueuedAt: Date())
        #expect(queue.next(now: Self.t0) == .deliver([Self.delivery(4, to: "carol@c.example")]))
    }

    @Test("a permanent failure makes a dead letter at once")
    func permanentFailure() {
        var queue = Self.queue([1, 2])
        let batch = [1, 2].map { Self.delivery($0) }
        _ = queue.next(now: Self.t0)
        let outcome = queue.finished(batch, results: [.failed("not a JID"), .delivered], now: Self.t0)
        #expect(outcome.deadLetters == [Queue.DeadLetter(delivery: Self.delivery(1), attempts: 1, reason: "not a JID")])
        #expect(queue.isEmpty)
        guard case .deadLetter(let dead, _, 1, "not a JID") = outcome.entries.first else {
            Issue.record("no dead-letter journal entry: \(outcome.entries)")
            return
        }
        #expect(dead.sequence == 1)
    }

    @Test("a missing answer counts as retry later")
    func missingAnswers() {
        var queue = Self.queue([1, 2])
        let batch = [1, 2].map { Self.delivery($0) }
        _ = queue.next(now: Self.t0)
        _ = queue.finished(batch, results: [.delivered], now: Self.t0)
        #expect(queue.pending.map(\.delivery.sequence) == [2])
        #expect(queue.pending.first?.attempts == 1)
    }

    @Test("a transient bounce queues the delivery again after a backoff; a permanent one makes a dead letter")
    func bounces() {
        var queue = Self.queue([1, 2])
        let batch = [1, 2].map { Self.delivery($0) }
        _ = queue.next(now: Self.t0)
        _ = queue.finished(batch, results: [.delivered, .delivered], now: Self.t0)
        #expect(queue.bounced(relayID: "unknown", permanent: true, reason: "x", now: Self.t0, sequence: 9) == nil)

        let transient = queue.bounced(relayID: "r-1", permanent: false, reason: "wait/recipient-unavailable", now: Self.t0, sequence: 10)
        #expect(transient?.retried == 1)
        #expect(queue.pending.map(\.delivery.sequence) == [10])
        #expect(queue.pending.first?.delivery.relayID == "r-1")
        #expect(queue.next(now: Self.t0) == .wait(until: Self.at(1)))

        let permanent = queue.bounced(relayID: "r-2", permanent: true, reason: "cancel/item-not-found", now: Self.t0, sequence: 11)
        #expect(permanent?.deadLetters.map(\.delivery.sequence) == [2])
        // Each bounce is matched once.
        #expect(queue.bounced(relayID: "r-2", permanent: true, reason: "again", now: Self.t0, sequence: 12) == nil)
    }

    @Test("a bounce that arrives before the batch is confirmed still counts")
    func bounceWhileInFlight() {
        var queue = Self.queue([1, 2, 3])
        let batch = [1, 2, 3].map { Self.delivery($0) }
        #expect(queue.next(now: Self.t0) == .deliver(batch))
        #expect(queue.bounced(relayID: "r-1", permanent: true, reason: "cancel/service-unavailable", now: Self.t0, sequence: 9)?.entries.isEmpty == true)
        #expect(queue.bounced(relayID: "r-2", permanent: false, reason: "wait/resource-constraint", now: Self.t0, sequence: 10)?.entries.isEmpty == true)
        let outcome = queue.finished(batch, results: [.delivered, .delivered, .delivered], now: Self.t0)
        #expect(outcome.deadLetters.map(\.delivery.sequence) == [1])
        #expect(outcome.delivered == 1)
        #expect(queue.pending.map(\.delivery.sequence) == [2])
        #expect(queue.pending.first?.attempts == 1)
        #expect(queue.next(now: Self.t0) == .wait(until: Self.at(1)))
    }

    @Test("capacity: rows and bytes; an empty queue takes anything")
    func capacity() {
        var queue = Queue(configuration: .init(maxRows: 2, maxBytes: 10_000))
        let huge = Self.delivery(1, body: String(repeating: "x", count: 50_000))
        #expect(queue.hasRoom(for: [huge]))
        queue.append(Self.delivery(1), enqueuedAt: Date())
        #expect(queue.hasRoom(for: [Self.delivery(2)]))
        #expect(!queue.hasRoom(for: [huge]))
        queue.append(Self.delivery(2), enqueuedAt: Date())
        #expect(!queue.hasRoom(for: [Self.delivery(3)]))
        queue.setAvailable(true)
        _ = queue.next(now: Self.t0)
        _ = queue.finished([Self.delivery(1), Self.delivery(2)], results: [.delivered, .retryLater("x")], now: Self.t0)
        #expect(queue.hasRoom(for: [Self.delivery(3)]))
    }

    @Test("operator actions: retry now skips the backoff; drop forgets, and a late answer for it is ignored")
    func operatorActions() {
        var queue = Self.queue([1, 2])
        let batch = [1, 2].map { Self.delivery($0) }
        _ = queue.next(now: Self.t0)
        _ = queue.finished(batch, results: [.retryLater("x"), .retryLater("x")], now: Self.t0)
        #expect(queue.next(now: Self.t0) == .wait(until: Self.at(1)))
        let retried = queue.retryNow(1)
        #expect(retried)
        #expect(queue.next(now: Self.t0) == .deliver(batch))
        let dropped = queue.drop(2)
        let droppedAgain = queue.drop(2)
        #expect(dropped)
        #expect(!droppedAgain)
        let outcome = queue.finished(batch, results: [.delivered, .delivered], now: Self.t0)
        #expect(outcome.delivered == 1)
        #expect(queue.isEmpty)
    }

    @Test("backoff doubles up to the cap")
    func backoffSchedule() {
        let queue = Queue(configuration: .init(retryInitialDelay: .seconds(1), retryMaximumDelay: .seconds(10)))
        #expect((1...6).map { queue.backoff(after: $0) } == [1, 2, 4, 8, 10, 10].map { Duration.seconds($0) })
    }
}
