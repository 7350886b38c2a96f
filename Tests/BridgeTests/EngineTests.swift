import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Testing
import Transports
import XMPP

@testable import Bridge

/// A transport that records deliveries and answers as told.
final class FakeTransport: Transport, Sendable {
    let name: String
    private let state = NIOLockedValueBox<(delivered: [Delivery], answer: DeliveryResult)>(([], .delivered))

    init(name: String) {
        self.name = name
    }

    var delivered: [Delivery] { self.state.withLockedValue { $0.delivered } }

    func answer(_ result: DeliveryResult) {
        self.state.withLockedValue { $0.answer = result }
    }

    func run() async throws {
        try? await gracefulShutdown()
    }

    func stop() async {}

    func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        self.state.withLockedValue { state in
            if case .delivered = state.answer { state.delivered += deliveries }
            return deliveries.map { _ in state.answer }
        }
    }
}

/// The relay path without sockets: engine → router → durable queue → worker → transport.
@Suite("Bridge engine and delivery workers")
struct EngineTests {
    let store = try! StateStore.inMemory()
    let work = FakeTransport(name: "work")
    let home = FakeTransport(name: "home")

    func engine() -> (BridgeEngine, [DeliveryWorker]) {
        let channel = Channel(
            name: "link",
            members: [
                ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@a.example"), direction: .inout),
                ChannelMember(endpoint: Endpoint(transport: "home", address: "bob@b.example"), direction: .inout),
            ]
        )
        let engine = BridgeEngine(
            router: Router(channels: [channel], ownJIDs: ["work@a.example", "home@b.example"]),
            store: self.store,
            ids: StanzaIDGenerator(prefix: "test"),
            logger: Logger(label: "engine-test"),
            finish: {}
        )
        let workers = [self.work, self.home].map {
            DeliveryWorker(transport: $0, store: self.store, batchSize: 10, retryDelay: .milliseconds(50), logger: Logger(label: "worker-test"))
        }
        return (engine, workers)
    }

    static func message(_ body: String?, from address: String = "alice@a.example", id: String) -> InboundMessage {
        InboundMessage(source: Endpoint(transport: "work", address: address), sender: "\(address)/phone", nick: "alice", id: id, body: body)
    }

    static func eventually(_ condition: @escaping () -> Bool) async -> Bool {
        for _ in 0..<250 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("a member's message is queued, delivered in order once the target is available, then removed")
    func queueThenDeliver() async throws {
        let (engine, workers) = self.engine()
        for worker in workers { await engine.add(worker) }
        let tasks = workers.map { worker in Task { try await worker.run() } }
        defer { tasks.forEach { $0.cancel() } }

        // home is not available yet: everything waits in the durable queue.
        for index in 1...5 {
            #expect(await engine.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work") == .accepted)
        }
        #expect(try self.store.pendingCount(transport: "home") == 5)
        #expect(self.home.delivered.isEmpty)

        _ = await engine.handle(.available, from: "home")
        #expect(await Self.eventually { self.home.delivered.count == 5 })
        #expect(self.home.delivered.map(\.originalBody) == ["m1", "m2", "m3", "m4", "m5"])
        #expect(self.home.delivered.allSatisfy { $0.target == Endpoint(transport: "home", address: "bob@b.example") })
        #expect(self.home.delivered.first?.body == "[link] alice: m1")
        #expect(await Self.eventually { (try? self.store.pendingCount(transport: "home")) == 0 })
        #expect(self.work.delivered.isEmpty)
    }

    @Test("retry later keeps deliveries queued and in order; failed ones are dropped")
    func retryAndFailure() async throws {
        let (engine, workers) = self.engine()
        for worker in workers { await engine.add(worker) }
        let tasks = workers.map { worker in Task { try await worker.run() } }
        defer { tasks.forEach { $0.cancel() } }

        self.home.answer(.retryLater("reconnecting"))
        _ = await engine.handle(.available, from: "home")
        _ = await engine.handle(.message(Self.message("first", id: "a")), from: "work")
        _ = await engine.handle(.message(Self.message("second", id: "b")), from: "work")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try self.store.pendingCount(transport: "home") == 2)

        self.home.answer(.delivered)
        #expect(await Self.eventually { self.home.delivered.map(\.originalBody) == ["first", "second"] })

        self.home.answer(.failed("no such user"))
        _ = await engine.handle(.message(Self.message("doomed", id: "c")), from: "work")
        #expect(await Self.eventually { (try? self.store.pendingCount(transport: "home")) == 0 })
        #expect(self.home.delivered.count == 2)
    }

    @Test("strangers, empty bodies and echoes of our own relays are not relayed")
    func dropped() async throws {
        let (engine, _) = self.engine()
        let stranger = await engine.handle(.message(Self.message("hi", from: "eve@evil.example", id: "e")), from: "work")
        guard case .dropped = stranger else {
            Issue.record("a stranger's message was accepted")
            return
        }
        let empty = await engine.handle(.message(Self.message(nil, id: "chatstate")), from: "work")
        guard case .dropped = empty else {
            Issue.record("an empty message was accepted")
            return
        }
        // A relayed id coming back (e.g. reflected by a server) is an echo.
        #expect(await engine.handle(.message(Self.message("once", id: "x")), from: "work") == .accepted)
        let relayID = try #require(try self.store.pending(transport: "home", limit: 1).first?.relayID)
        let echo = await engine.handle(.message(Self.message("once", id: relayID)), from: "work")
        guard case .dropped(let reason) = echo else {
            Issue.record("an echo was relayed")
            return
        }
        #expect(reason.contains("echo"))
        #expect(try self.store.pendingCount(transport: "home") == 1)
    }
}
