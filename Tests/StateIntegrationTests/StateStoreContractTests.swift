import Foundation
import IntegrationSupport
import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeState

extension StateIntegration {
    /// The persisted state, the same tests against both stores (issue 26): the durable queue
    /// survives restarts in order, route changes persist and merge over the configuration,
    /// relays are recorded, dead letters are retried and dropped.
    @Suite("StateStore contract (SQLite and PostgreSQL)")
    struct StateStoreContractTests {
        @Test("the queue survives a restart and keeps its order", arguments: StateBackend.available)
        func queueSurvivesRestart(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)

            var enqueued: [Delivery] = []
            do {
                let store = try await state.open()
                enqueued = try store.enqueue((0..<100).map { delivery($0) })
            }  // the store deinitialises here: the "process" exits

            #expect(enqueued.count == 100)
            #expect(enqueued.map(\.body) == (0..<100).map { "body \($0)" })
            #expect(zip(enqueued, enqueued.dropFirst()).allSatisfy { $0.sequence < $1.sequence })

            let completed: Set<Int64>
            do {
                let store = try await state.open()
                #expect(try store.pending(transport: "home", limit: 1000) == enqueued)
                completed = Set(enqueued.enumerated().filter { $0.offset % 3 == 0 || $0.offset < 10 }.map(\.element.sequence))
                for sequence in completed {
                    #expect(try store.complete(sequence: sequence))
                }
            }

            let store = try await state.open()
            let remaining = enqueued.filter { !completed.contains($0.sequence) }
            #expect(try store.pending(transport: "home", limit: 1000) == remaining)
            #expect(try store.pendingCount(transport: nil) == remaining.count)
        }

        @Test("every field of a delivery is stored", arguments: StateBackend.available)
        func deliveryRoundTrip(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let store = try await state.open()
            let full = Delivery(
                channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: "[ops] alice: hi",
                originalBody: "hi", nick: "alice", subject: "Status", type: .headline,
                source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "m-1", relayID: "r-1"
            )
            let local = Delivery(
                channel: "ops", target: Endpoint(transport: "stdout"), body: "x", originalBody: "x", nick: "cron",
                type: .normal, source: Endpoint(transport: "alerts"), sourceID: "m-2", relayID: "r-2"
            )
            let stored = try store.enqueue([full, local])
            #expect(stored.map { withSequence($0, 0) } == [full, local])
            #expect(try store.pending(transport: "home", limit: 10) == [stored[0]])
            #expect(try store.pending(transport: "stdout", limit: 10) == [stored[1]])
        }

        @Test("pending is per transport, limited, and counted", arguments: StateBackend.available)
        func pendingPerTransport(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let store = try await state.open()
            let stored = try store.enqueue((0..<9).map { delivery($0, to: ["home", "work", "stdout"][$0 % 3]) })

            #expect(try store.pending(transport: "work", limit: 10) == [stored[1], stored[4], stored[7]])
            #expect(try store.pending(transport: "home", limit: 2) == [stored[0], stored[3]])
            #expect(try store.pending(transport: "nobody", limit: 10).isEmpty)
            #expect(try store.pendingCount(transport: "stdout") == 3)
            #expect(try store.pendingCount(transport: "nobody") == 0)
            #expect(try store.pendingCount(transport: nil) == 9)
            #expect(try store.allPendingTransports() == ["home", "stdout", "work"])

            for delivery in stored where delivery.target.transport == "stdout" {
                try store.complete(sequence: delivery.sequence)
            }
            #expect(try store.allPendingTransports() == ["home", "work"])
        }

        @Test("completing out of order leaves the rest in order; sequences are never reused", arguments: StateBackend.available)
        func completeOutOfOrder(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let store = try await state.open()
            let stored = try store.enqueue((0..<5).map { delivery($0) })

            #expect(try store.complete(sequence: stored[2].sequence))
            #expect(try store.complete(sequence: stored[4].sequence))
            #expect(try store.complete(sequence: stored[0].sequence))
            #expect(try store.complete(sequence: stored[0].sequence) == false)
            #expect(try store.pending(transport: "home", limit: 10) == [stored[1], stored[3]])

            try store.complete(sequence: stored[1].sequence)
            try store.complete(sequence: stored[3].sequence)
            #expect(try store.pendingCount(transport: nil) == 0)
            let later = try store.enqueue([delivery(5)])
            #expect(later[0].sequence > stored[4].sequence)
        }

        // MARK: - Routes

        @Test("route changes survive a restart; the latest change per member wins", arguments: StateBackend.available)
        func routesPersist(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let bob = Endpoint(transport: "home", address: "bob@b.example")
            let clock = SteppingClock()

            do {
                let store = try await state.open(now: clock.now)
                try store.addRoute(channel: "ops", member: ChannelMember(endpoint: bob, direction: .out))
                try store.removeRoute(channel: "ops", endpoint: Endpoint(transport: "stdin"))
                try store.addRoute(channel: "ops", member: ChannelMember(endpoint: bob, direction: .inout))
            }

            let store = try await state.open(now: clock.now)
            #expect(
                try store.routes() == [
                    RouteChange(channel: "ops", endpoint: Endpoint(transport: "stdin"), kind: .remove, changedAt: clock.time(1)),
                    RouteChange(channel: "ops", endpoint: bob, kind: .add(.inout), changedAt: clock.time(2)),
                ]
            )

            try store.removeRoute(channel: "ops", endpoint: bob)
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in))
            #expect(
                try store.routes().map { [$0.endpoint.description: $0.kind] } == [
                    ["home:bob@b.example": .remove],
                    ["stdin": .add(.in)],
                ]
            )
        }

        @Test("runtime routes merge over the configured channels", arguments: StateBackend.available)
        func applyRoutesMerges(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let alice = ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@a.example"), direction: .inout)
            let stdin = ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in)
            let configured = [
                RelayChannel(name: "ops", members: [alice, stdin], format: "{nick}: {body}", deliveryType: .headline),
                RelayChannel(name: "quiet", members: [alice]),
            ]
            let bob = ChannelMember(endpoint: Endpoint(transport: "home", address: "bob@b.example"), direction: .out)
            let store = try await state.open()

            // Nothing stored: the configuration as is.
            #expect(try store.applyRoutes(to: configured) == configured)

            try store.addRoute(channel: "ops", member: bob)
            try store.removeRoute(channel: "ops", endpoint: stdin.endpoint)
            try store.addRoute(channel: "new", member: bob)
            try store.removeRoute(channel: "quiet", endpoint: alice.endpoint)
            try store.removeRoute(channel: "unknown", endpoint: alice.endpoint)
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: alice.endpoint, direction: .in))

            var merged = try store.applyRoutes(to: configured)
            #expect(
                merged == [
                    RelayChannel(
                        name: "ops", members: [ChannelMember(endpoint: alice.endpoint, direction: .in), bob],
                        format: "{nick}: {body}", deliveryType: .headline
                    ),
                    RelayChannel(name: "quiet", members: []),
                    RelayChannel(name: "new", members: [bob], format: RelayChannel.defaultFormat, deliveryType: .chat),
                ]
            )

            // Re-adding a removed member brings it back (the addition replaces the removal, so
            // a configured member returns to its configured place).
            try store.addRoute(channel: "ops", member: stdin)
            merged = try store.applyRoutes(to: configured)
            #expect(merged[0].members == [ChannelMember(endpoint: alice.endpoint, direction: .in), stdin, bob])
            try store.removeRoute(channel: "new", endpoint: bob.endpoint)
            try store.addRoute(channel: "new", member: ChannelMember(endpoint: bob.endpoint, direction: .inout))
            merged = try store.applyRoutes(to: configured)
            #expect(merged[2] == RelayChannel(name: "new", members: [ChannelMember(endpoint: bob.endpoint, direction: .inout)]))
        }

        // MARK: - Relays

        @Test("enqueue records the relay ids; an echo of one is recognised", arguments: StateBackend.available)
        func relaysRecordedWithEnqueue(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let clock = SteppingClock()
            let store = try await state.open(now: clock.now)
            let source = Endpoint(transport: "work", address: "alice@a.example")
            let toBob = Delivery(
                channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: "b", originalBody: "b",
                nick: "alice", type: .chat, source: source, sourceID: "m-1", relayID: "r-1"
            )
            var toStdout = toBob
            toStdout.target = Endpoint(transport: "stdout")
            toStdout.relayID = "r-2"
            _ = try store.enqueue([toBob, toStdout])

            #expect(try store.isRelayID("r-1"))
            #expect(try store.isRelayID("r-2"))
            #expect(try store.isRelayID("m-1") == false)

            let relays = try store.relays(forSource: "work", address: "alice@a.example", id: "m-1")
            #expect(relays.map(\.relayID) == ["r-1", "r-2"])
            #expect(relays.map(\.target) == [toBob.target, toStdout.target])
            #expect(relays.allSatisfy { $0.source == source && $0.channel == "ops" && $0.createdAt == clock.time(0) })
            #expect(try store.relays(forSource: "work", address: nil, id: "m-1").isEmpty)

            // Recording again is harmless; a local source (nil address) is found by nil.
            var fromStdin = toBob
            fromStdin.source = Endpoint(transport: "stdin")
            fromStdin.sourceID = "line-1"
            fromStdin.relayID = "r-3"
            try store.recordRelays([toBob, fromStdin])
            #expect(try store.relays(forSource: "work", address: "alice@a.example", id: "m-1").count == 2)
            #expect(try store.relays(forSource: "stdin", address: nil, id: "line-1").map(\.relayID) == ["r-3"])

            #expect(try store.pruneRelays(before: clock.time(1)) == 2)
            #expect(try store.isRelayID("r-1") == false)
            #expect(try store.isRelayID("r-3"))
        }

        @Test("dead letters offline: retry queues them anew after every sequence, drop forgets them", arguments: StateBackend.available)
        func deadLettersOffline(_ backend: StateBackend) async throws {
            let state = try await StateFixture(backend)
            let store = try await state.open()
            let stored = try store.enqueue([delivery(1), delivery(2), delivery(3)])
            try store.apply(stored.prefix(2).map { .deadLetter($0, enqueuedAt: Date(), attempts: 10, reason: "gave up") }, intakeThrough: nil)
            #expect(try store.deadLetterCount(transport: "home") == 2)
            #expect(try store.retryDeadLetters([stored[0].sequence]) == 1)
            let queued = try store.loadQueue()
            #expect(queued.map(\.body) == ["body 3", "body 1"])
            #expect(queued.last!.sequence! > stored[2].sequence)
            #expect(try store.dropDeadLetters(nil) == 1)
            #expect(try store.deadLetters().isEmpty)
        }
    }
}

// MARK: - Helpers

/// The n-th test delivery: from alice to `transport`, with unique ids.
func delivery(_ n: Int, to transport: String = "home") -> Delivery {
    Delivery(
        channel: "ops", target: Endpoint(transport: transport, address: transport == "stdout" ? nil : "bob@b.example"),
        body: "body \(n)", originalBody: "original \(n)", nick: "alice", subject: n.isMultiple(of: 2) ? nil : "s\(n)",
        type: .chat, source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "m-\(n)",
        relayID: "r-\(n)"
    )
}

func withSequence(_ delivery: Delivery, _ sequence: Int64) -> Delivery {
    var copy = delivery
    copy.sequence = sequence
    return copy
}
