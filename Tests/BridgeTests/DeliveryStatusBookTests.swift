import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// `GET /messages/{id}` and `?wait=sent` without sockets: the id map in a real (in-memory)
/// state store, the queue as a set the test controls, time on the manual clock.
@Suite("Delivery status book")
struct DeliveryStatusBookTests {
    let clock = ManualClock()
    let queued = NIOLockedValueBox<Set<String>>([])

    static func delivery(_ relayID: String, to target: Endpoint, id: String = "web-1") -> Delivery {
        Delivery(
            channel: "alerts", target: target, body: "b", originalBody: "b", nick: "web", type: .chat, source: Endpoint(transport: "web"),
            sourceID: id, relayID: relayID
        )
    }

    static let phone = Endpoint(transport: "work", address: "oncall@example.org")
    static let socket = Endpoint(transport: "sub")

    func book(_ deliveries: [Delivery]) throws -> DeliveryStatusBook<ManualClock> {
        let store = try SQLiteStateStore.inMemory()
        try store.recordRelays(deliveries)
        let book = DeliveryStatusBook(store: store, clock: self.clock)
        let queued = self.queued
        book.attach(queued: { ids in queued.withLockedValue { $0.intersection(ids) } }, accounts: { ["work"] })
        return book
    }

    @Test("queued, then sent once no copy is queued; the overall state follows the XMPP targets; unknown ids are nil")
    func states() async throws {
        let copies = [Self.delivery("r1", to: Self.phone), Self.delivery("r2", to: Self.socket)]
        let book = try self.book(copies)
        self.queued.withLockedValue { $0 = ["r1"] }
        let queued = try #require(await book.status(ofMessage: "web-1", from: "web"))
        #expect(queued.state == .queued)
        #expect(queued.targets == [.init(target: "work:oncall@example.org", state: .queued), .init(target: "sub", state: .sent)])
        self.queued.withLockedValue { $0 = [] }
        #expect(await book.status(ofMessage: "web-1", from: "web")?.state == .sent)
        #expect(await book.status(ofMessage: "web-2", from: "web") == nil)
        #expect(await book.status(ofMessage: "web-1", from: "other") == nil)
    }

    @Test("?wait=sent returns when the worker reports the copy settled, not before")
    func waitWakesOnSettled() async throws {
        let copy = Self.delivery("r1", to: Self.phone)
        let book = try self.book([copy])
        self.queued.withLockedValue { $0 = ["r1"] }
        let answered = NIOLockedValueBox(false)
        let waiter = Task {
            let status = await book.waitUntilSent(message: "web-1", from: "web", timeout: .seconds(30))
            answered.withLockedValue { $0 = true }
            return status
        }
        // The waiter is parked once its timer sleeps on the manual clock.
        await self.clock.waitForSleepers()
        #expect(!answered.withLockedValue { $0 })
        self.queued.withLockedValue { $0 = [] }
        book.settled([copy])
        #expect(await waiter.value?.state == .sent)
    }

    @Test("?wait=sent gives up at its timeout with the copy still queued")
    func waitTimesOut() async throws {
        let book = try self.book([Self.delivery("r1", to: Self.phone)])
        self.queued.withLockedValue { $0 = ["r1"] }
        let waiter = Task { await book.waitUntilSent(message: "web-1", from: "web", timeout: .seconds(30)) }
        await self.clock.waitForSleepers()
        self.clock.advance(by: .seconds(30))
        #expect(await waiter.value?.state == .queued)
    }

    @Test("a dead letter reports failed at once, before the journal has written it")
    func failedFromMemory() async throws {
        let copy = Self.delivery("r1", to: Self.phone)
        let book = try self.book([copy])
        book.settled([], failed: [(copy, "item-not-found")])
        let status = try #require(await book.status(ofMessage: "web-1", from: "web"))
        #expect(status.state == .failed)
        #expect(status.targets.first?.error == "item-not-found")
    }

    @Test("a cancelled wait (the ingress stops) returns without waiting out its timeout")
    func cancelledWait() async throws {
        let book = try self.book([Self.delivery("r1", to: Self.phone)])
        self.queued.withLockedValue { $0 = ["r1"] }
        let waiter = Task { await book.waitUntilSent(message: "web-1", from: "web", timeout: .seconds(3600)) }
        await self.clock.waitForSleepers()
        waiter.cancel()
        #expect(await waiter.value?.state == .queued)
    }
}
