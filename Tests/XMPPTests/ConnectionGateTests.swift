import Testing
import TestSupport

@testable import XMPP

/// The login queue (issue 21, "logins paced"): at most `limit` holders, waiters let in in
/// arrival order, a cancelled waiter leaves without taking a place.
@Suite("ConnectionGate")
struct ConnectionGateTests {
    @Test func atMostTheLimitHoldAPlaceAndWaitersGoInOrder() async throws {
        let gate = ConnectionGate(limit: 2)
        try await gate.acquire()
        try await gate.acquire()
        #expect(gate.usage == (2, 0))
        let (order, sink) = AsyncStream.makeStream(of: Int.self)
        var waiters: [Task<Void, any Error>] = []
        for index in 1...3 {
            waiters.append(Task {
                try await gate.acquire()
                sink.yield(index)
            })
            // The next waiter only once this one is queued: arrival order is the test's.
            #expect(await untilTrue { gate.usage.waiting == index })
        }
        var admitted = order.makeAsyncIterator()
        gate.release()
        #expect(await admitted.next() == 1)
        gate.release()
        #expect(await admitted.next() == 2)
        #expect(gate.usage == (2, 1))
        gate.release()
        #expect(await admitted.next() == 3)
        for waiter in waiters { try await waiter.value }
        gate.release()
        gate.release()
        #expect(gate.usage == (0, 0))
    }

    @Test func aCancelledWaiterLeavesTheQueueWithoutAPlace() async throws {
        let gate = ConnectionGate(limit: 1)
        try await gate.acquire()
        let waiter = Task { try await gate.acquire() }
        #expect(await untilTrue { gate.usage.waiting == 1 })
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(gate.usage == (1, 0))
        gate.release()
        #expect(gate.usage == (0, 0))
        try await gate.acquire()  // the place is free again
    }

    @Test func aTaskCancelledBeforeItAsksTakesNoPlaceAndQueuesNothing() async throws {
        let gate = ConnectionGate(limit: 1)
        try await gate.acquire()
        let (go, sink) = AsyncStream.makeStream(of: Void.self)
        let late = Task {
            var iterator = go.makeAsyncIterator()
            await iterator.next()
            try await gate.acquire()
        }
        late.cancel()
        sink.yield()
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(gate.usage == (1, 0))
    }

    @Test func oneGatePerServerByHostElseDomain() throws {
        let gates = ConnectionGates(limitPerServer: 3)
        let a = XMPPClientConfiguration(jid: try JID("a@one.example"))
        let b = XMPPClientConfiguration(jid: try JID("b@ONE.example"))
        let c = XMPPClientConfiguration(jid: try JID("c@two.example"))
        let d = XMPPClientConfiguration(jid: try JID("d@three.example"), host: "One.Example")
        #expect(gates.gate(for: a) === gates.gate(for: b))
        #expect(gates.gate(for: a) !== gates.gate(for: c))
        #expect(gates.gate(for: d) === gates.gate(for: a))  // the host it connects to
        #expect(gates.gate(for: c).limit == 3)
    }

    @Test func aFullGateForOneServerHoldsUpNoOther() async throws {
        let gates = ConnectionGates(limitPerServer: 1)
        let dead = XMPPClientConfiguration(jid: try JID("a@dead.example"))
        let healthy = XMPPClientConfiguration(jid: try JID("b@healthy.example"))
        try await gates.gate(for: dead).acquire()
        let waiting = Task { try await gates.gate(for: dead).acquire() }
        #expect(await untilTrue { gates.gate(for: dead).usage.waiting == 1 })
        try await gates.gate(for: healthy).acquire()  // returns at once
        #expect(gates.gate(for: healthy).usage == (1, 0))
        waiting.cancel()
        _ = try? await waiting.value
    }
}
