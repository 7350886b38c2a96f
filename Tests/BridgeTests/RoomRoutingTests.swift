import Foundation
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting

/// Rooms in the routing table and the delivery queue (issue 10): subject changes only where
/// asked for; deliveries into a room we are out of wait without spending attempts, and go
/// as soon as the room is joined again.
@Suite("Rooms: routing and queueing")
struct RoomRoutingTests {
    typealias Queue = DeliveryQueue<ManualClock.Instant>
    static let t0 = ManualClock.Instant()
    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    static func router(subject: Bool) -> Router {
        Router(
            channels: [
                RelayChannel(
                    name: "rooms",
                    members: [
                        ChannelMember(endpoint: Endpoint(transport: "a", address: "dev@muc.a.test"), direction: .inout, room: RoomMembership(nick: "bridge")),
                        ChannelMember(endpoint: Endpoint(transport: "b", address: "ops@muc.b.test"), direction: .inout, room: RoomMembership()),
                    ],
                    format: "{nick}: {body}", relaysSubject: subject
                )
            ],
            ownJIDs: ["relay@a.test", "relay@b.test"]
        )
    }

    static func roomMessage(body: String?, subject: String?) -> InboundMessage {
        InboundMessage(
            source: Endpoint(transport: "a", address: "dev@muc.a.test"), sender: "dev@muc.a.test/alice", nick: "alice", id: "m1", body: body,
            subject: subject, awaitsCommit: false
        )
    }

    @Test("a room's message goes to the linked room by nick; a subject change only with subject = true, as text")
    func subjects() {
        var ids = 0
        let next: () -> String = { ids += 1; return "r\(ids)" }
        guard case .deliver(let plain) = Self.router(subject: false).route(Self.roomMessage(body: "hi", subject: nil), makeID: next) else {
            Issue.record("not relayed")
            return
        }
        #expect(plain.map(\.target) == [Endpoint(transport: "b", address: "ops@muc.b.test")])
        #expect(plain.first?.body == "alice: hi")
        #expect(Self.router(subject: false).route(Self.roomMessage(body: nil, subject: "release day"), makeID: next) == .drop(reason: .noBody))
        guard case .deliver(let change) = Self.router(subject: true).route(Self.roomMessage(body: nil, subject: "release day"), makeID: next) else {
            Issue.record("subject change not relayed")
            return
        }
        #expect(change.first?.body == "alice: changed the subject to: release day")
        // The change is text: no <subject/> goes along (it would change the other room's).
        #expect(change.first?.subject == nil)
    }

    @Test("someone entering a room is told to the other members as text only where occupant_events is on")
    func occupantNotices() {
        var notice = Self.roomMessage(body: "entered the room", subject: nil)
        notice.isOccupantNotice = true
        var ids = 0
        let next: () -> String = { ids += 1; return "r\(ids)" }
        #expect(Self.router(subject: false).route(notice, makeID: next) == .drop(reason: .noReceivers))
        let router = Router(
            channels: [RelayChannel(name: "rooms", members: Self.router(subject: false).channels[0].members, format: "{nick} {body}", relaysOccupants: true)],
            ownJIDs: []
        )
        guard case .deliver(let deliveries) = router.route(notice, makeID: next) else {
            Issue.record("notice not relayed")
            return
        }
        #expect(deliveries.map(\.body) == ["alice entered the room"])
    }

    static func delivery(_ sequence: Int64, to address: String) -> Delivery {
        Delivery(
            sequence: sequence, channel: "rooms", target: Endpoint(transport: "b", address: address), body: "x", originalBody: "x", nick: "alice",
            type: .chat, source: Endpoint(transport: "a", address: "dev@muc.a.test"), sourceID: "s\(sequence)", relayID: "r\(sequence)"
        )
    }

    @Test("waitForTarget: held without an attempt (never a dead letter), other targets go on; targetReady releases it at once")
    func waitForRoom() {
        var queue = Queue(configuration: .init(batchSize: 10, maxAttempts: 2, targetRecheck: .seconds(60)))
        let room = "ops@muc.b.test"
        for sequence: Int64 in 1...3 { queue.append(Self.delivery(sequence, to: sequence == 3 ? "carol@b.test" : room), enqueuedAt: Date()) }
        queue.setAvailable(true)
        for round in 0..<5 {
            let now = Self.at(round * 60)
            guard case .deliver(let batch) = queue.next(now: now) else {
                Issue.record("nothing to deliver in round \(round)")
                return
            }
            let results: [DeliveryResult] = batch.map { $0.target.address == room ? .waitForTarget("not in the room") : .delivered }
            let outcome = queue.finished(batch, results: results, now: now)
            #expect(outcome.deadLetters.isEmpty)
            #expect(outcome.retried == 0)
        }
        #expect(queue.pending.map(\.delivery.sequence) == [1, 2])
        #expect(queue.pending.allSatisfy { $0.attempts == 0 })
        // Waiting for the recheck…
        #expect(queue.next(now: Self.at(241)) == .wait(until: Self.at(300)))
        // …until the room is joined again.
        let released = queue.targetReady(Endpoint(transport: "b", address: room))
        #expect(released)
        #expect(queue.next(now: Self.at(241)) == .deliver([Self.delivery(1, to: room), Self.delivery(2, to: room)]))
        let none = queue.targetReady(Endpoint(transport: "b", address: "carol@b.test"))
        #expect(!none)
    }

    @Test("the room is joined while the batch that met it out is still in flight: its deliveries go at once, not after the recheck")
    func readyWhileInFlight() {
        var queue = Queue(configuration: .init(batchSize: 10, targetRecheck: .seconds(60)))
        let room = "ops@muc.b.test"
        queue.append(Self.delivery(1, to: room), enqueuedAt: Date())
        queue.setAvailable(true)
        guard case .deliver(let batch) = queue.next(now: Self.t0) else {
            Issue.record("nothing to deliver")
            return
        }
        // The transport found the room not joined; the join completes before the answer is in.
        _ = queue.targetReady(Endpoint(transport: "b", address: room))
        _ = queue.finished(batch, results: [.waitForTarget("not in the room")], now: Self.t0)
        #expect(queue.next(now: Self.t0) == .deliver([Self.delivery(1, to: room)]))
    }
}
