import Foundation
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay

@Suite("What a former owner may have sent")
struct InheritedDeliveriesTests {
    static func queued(_ sequence: Int64, to transport: String, at seconds: TimeInterval) -> (delivery: Delivery, enqueuedAt: Date, attempts: Int) {
        let delivery = Delivery(
            sequence: sequence, channel: "link", target: Endpoint(transport: transport, address: "bob@example.test"), body: "b", originalBody: "b",
            nick: "n", type: .chat, source: Endpoint(transport: "work", address: "alice@example.test"), sourceID: "s\(sequence)", relayID: "r\(sequence)"
        )
        return (delivery, Date(timeIntervalSince1970: seconds), 0)
    }

    @Test("the account's own deliveries, oldest sequence first, since the oldest queued; other transports' left out")
    func ownOldestFirst() throws {
        let queued = [Self.queued(7, to: "home", at: 30), Self.queued(3, to: "home", at: 20), Self.queued(5, to: "work", at: 10), Self.queued(4, to: "home", at: 25)]
        let inherited = InheritedDeliveries(queued, account: "home")
        #expect(inherited.relayIDs == ["r3", "r4", "r7"])
        #expect(inherited.since == Date(timeIntervalSince1970: 20) && inherited.lostSince == inherited.since)
        let now = Date(timeIntervalSince1970: 99)
        #expect(InheritedDeliveries(queued, account: "fifo", now: now).relayIDs.isEmpty)
        #expect(InheritedDeliveries([], account: "home", now: now).since == now, "nothing queued: nothing older than now")
    }

    @Test("at most the first `limit` by sequence: later ones were never in flight")
    func limited() throws {
        let queued = (1...Int64(InheritedDeliveries.limit + 50)).reversed().map { Self.queued($0, to: "home", at: TimeInterval($0)) }
        let inherited = InheritedDeliveries(queued, account: "home")
        #expect(inherited.relayIDs.count == InheritedDeliveries.limit)
        #expect(inherited.relayIDs.first == "r1" && inherited.relayIDs.last == "r\(InheritedDeliveries.limit)")
    }
}
