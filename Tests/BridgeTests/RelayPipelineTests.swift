import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// A transport that records deliveries and answers as told; each batch is announced on
/// `batches` so tests wait on events, not time.
final class FakeTransport: Transport, Sendable {
    let name: String
    private let state = NIOLockedValueBox<(delivered: [Delivery], answer: DeliveryResult)>(([], .delivered))
    let batches: AsyncStream<[Delivery]>
    private let batchSink: AsyncStream<[Delivery]>.Continuation

    init(name: String) {
        self.name = name
        (self.batches, self.batchSink) = AsyncStream.makeStream(of: [Delivery].self)
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
        let results = self.state.withLockedValue { state in
            if case .delivered = state.answer { state.delivered += deliveries }
            return deliveries.map { _ in state.answer }
        }
        self.batchSink.yield(deliveries)
        return results
    }
}

/// A transport whose deliveries wait until the test answers them: each batch is written at
/// once, announced on `entered`, then held until ``release(_:)``.
final class HeldTransport: Transport, Sendable {
    let name: String
    let entered: AsyncStream<[Delivery]>
    private let enteredSink: AsyncStream<[Delivery]>.Continuation
    private let answers: AsyncStream<DeliveryResult>
    private let answerSink: AsyncStream<DeliveryResult>.Continuation

    init(name: String) {
        self.name = name
        (self.entered, self.enteredSink) = AsyncStream.makeStream(of: [Delivery].self)
        (self.answers, self.answerSink) = AsyncStream.makeStream(of: DeliveryResult.self)
    }

    func release(_ result: DeliveryResult) { self.answerSink.yield(result) }

    func run() async throws { try? await gracefulShutdown() }

    func stop() async {}

    func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        await self.deliver(deliveries, written: {})
    }

    /// Written at once, answered when released: the shape of XMPP with stream management,
    /// so a worker may hand over its next batch meanwhile.
    func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult] {
        written()
        self.enteredSink.yield(deliveries)
        var answers = self.answers.makeAsyncIterator()
        let answer = await answers.next() ?? .retryLater("stopped")
        return deliveries.map { _ in answer }
    }
}

/// The relay path without sockets (issue 8): pipeline → router → split → journal →
/// in-memory queue → worker → transport, with a manual clock.
@Suite("Relay pipeline and delivery workers")
struct RelayPipelineTests {
    typealias Pipeline = RelayPipeline<ManualClock>
    let folder = try! TemporaryFolder()
    let clock = ManualClock()
    let work = FakeTransport(name: "work")
    let home = FakeTransport(name: "home")

    static let channel = RelayChannel(
        name: "link",
        members: [
            ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@a.example"), direction: .inout),
            ChannelMember(endpoint: Endpoint(transport: "home", address: "bob@b.example"), direction: .inout),
        ]
    )

    struct Running {
        let pipeline: Pipeline
        let store: SQLiteStateStore
        let journal: Journal
        let tasks: [Task<Void, any Error>]

        func cancel() { self.tasks.forEach { $0.cancel() } }
    }

    func start(_ configuration: DeliveryQueue<ManualClock.Instant>.Configuration = .init(batchSize: 10, maxAttempts: 3), stanzaLimit: Int? = nil) async throws -> Running {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = Pipeline(
            router: Router(channels: [Self.channel], ownJIDs: ["work@a.example", "home@b.example"]), journal: journal,
            ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test", clock: self.clock, logger: Logger(label: "pipeline-test"), finish: {}
        )
        try await pipeline.load(from: store)
        var tasks: [Task<Void, any Error>] = []
        for transport in [self.work, self.home] {
            let worker = pipeline.makeWorker(for: transport, configuration: configuration)
            await pipeline.add(worker, stanzaLimit: stanzaLimit)
            tasks.append(Task { try await worker.run() })
        }
        return Running(pipeline: pipeline, store: store, journal: journal, tasks: tasks)
    }

    static func message(_ body: String?, from address: String = "alice@a.example", id: String) -> InboundMessage {
        InboundMessage(source: Endpoint(transport: "work", address: address), sender: "\(address)/phone", nick: "alice", id: id, body: body)
    }

    /// Collects batches from `transport` until `count` deliveries arrived.
    static func receive(_ count: Int, from transport: FakeTransport) async -> [Delivery] {
        var received: [Delivery] = []
        for await batch in transport.batches {
            received += batch
            if received.count >= count { break }
        }
        return received
    }

    @Test("accepted means committed: the journal holds the delivery before the source is answered")
    func acceptedIsDurable() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        for index in 1...5 {
            #expect(await running.pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work") == .accepted)
        }
        // A second connection to the file sees all five, without waiting for anything.
        let reader = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        #expect(try reader.pending(transport: "home", limit: 10).map(\.originalBody) == ["m1", "m2", "m3", "m4", "m5"])
        #expect(self.home.delivered.isEmpty)
    }

    @Test("queued while the target is unavailable, then delivered in order; completions reach the journal")
    func queueThenDeliver() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        for index in 1...5 {
            _ = await running.pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work")
        }
        _ = await running.pipeline.handle(.available, from: "home")
        let received = await Self.receive(5, from: self.home)
        #expect(received.map(\.originalBody) == ["m1", "m2", "m3", "m4", "m5"])
        #expect(received.first?.body == "[link] alice: m1")
        #expect(received.allSatisfy { $0.target == Endpoint(transport: "home", address: "bob@b.example") })
        await running.journal.flushed()
        #expect(try running.store.pendingCount(transport: "home") == 0)
        #expect(self.work.delivered.isEmpty)
    }

    @Test("the queue read back after a restart is delivered, in order, once")
    func restart() async throws {
        do {
            let running = try await self.start()
            for index in 1...3 {
                _ = await running.pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work")
            }
            running.cancel()
        }
        let running = try await self.start()
        defer { running.cancel() }
        #expect(await running.pipeline.queueStatus()["home"]?.queued == 3)
        _ = await running.pipeline.handle(.available, from: "home")
        #expect(await Self.receive(3, from: self.home).map(\.originalBody) == ["m1", "m2", "m3"])
    }

    @Test("retry later backs off on the manual clock; after max attempts the delivery is a dead letter")
    func retriesThenDeadLetter() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        self.home.answer(.retryLater("reconnecting"))
        _ = await running.pipeline.handle(.message(Self.message("doomed", id: "a")), from: "work")
        _ = await running.pipeline.handle(.available, from: "home")
        _ = await Self.receive(1, from: self.home)  // attempt 1
        await Self.untilSleeping(self.clock)
        self.clock.advance(by: .seconds(1))
        _ = await Self.receive(1, from: self.home)  // attempt 2
        await Self.untilSleeping(self.clock)
        self.clock.advance(by: .seconds(2))
        _ = await Self.receive(1, from: self.home)  // attempt 3: gives up
        await running.journal.flushed()
        try await Self.until { try running.store.deadLetters().count == 1 }
        let letter = try #require(try running.store.deadLetters().first)
        #expect(letter.attempts == 3)
        #expect(letter.reason == "gave up after 3 attempts: reconnecting")
        #expect(try running.store.pendingCount(transport: "home") == 0)
        #expect(await running.pipeline.queueStatus()["home"]?.dead == 1)

        // Retried by the operator: queued anew and delivered.
        self.home.answer(.delivered)
        #expect(try await running.pipeline.retry(nil) == 1)
        #expect(await Self.receive(1, from: self.home).map(\.originalBody) == ["doomed"])
        #expect(try running.store.deadLetters().isEmpty)
    }

    @Test("a permanent failure goes straight to the dead letters")
    func failure() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        self.home.answer(.failed("no such user"))
        _ = await running.pipeline.handle(.available, from: "home")
        _ = await running.pipeline.handle(.message(Self.message("lost?", id: "c")), from: "work")
        _ = await Self.receive(1, from: self.home)
        await running.journal.flushed()
        try await Self.until { try running.store.deadLetters().map(\.reason) == ["no such user"] }
    }

    @Test("a transient bounce of a delivered message is retried; a permanent one becomes a dead letter")
    func bounces() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        _ = await running.pipeline.handle(.available, from: "home")
        _ = await running.pipeline.handle(.message(Self.message("one", id: "1")), from: "work")
        _ = await running.pipeline.handle(.message(Self.message("two", id: "2")), from: "work")
        let sent = await Self.receive(2, from: self.home)
        _ = await running.pipeline.handle(.bounced(relayID: sent[0].relayID, reason: "wait/resource-constraint", permanent: false), from: "home")
        await Self.untilSleeping(self.clock)
        self.clock.advance(by: .seconds(1))
        let again = await Self.receive(1, from: self.home)
        #expect(again.map(\.relayID) == [sent[0].relayID])
        _ = await running.pipeline.handle(.bounced(relayID: sent[1].relayID, reason: "cancel/item-not-found", permanent: true), from: "home")
        await running.journal.flushed()
        try await Self.until { try running.store.deadLetters().map(\.originalBody) == ["two"] }
    }

    @Test("intake waits while a target queue is full, and nothing is dropped")
    func backpressure() async throws {
        let running = try await self.start(.init(batchSize: 10, maxRows: 2))
        defer { running.cancel() }
        let pipeline = running.pipeline
        let sender = Task {
            for index in 1...5 {
                _ = await pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work")
            }
        }
        // The queue never holds more than its limit.
        try await Self.until { await pipeline.queueStatus()["home"]?.queued == 2 }
        #expect(try running.store.pendingCount(transport: "home") == 2)
        _ = await pipeline.handle(.available, from: "home")
        #expect(await Self.receive(5, from: self.home).map(\.originalBody) == ["m1", "m2", "m3", "m4", "m5"])
        await sender.value
    }

    @Test("an oversize message is split into parts within the target's limit")
    func poisonSplit() async throws {
        let running = try await self.start(stanzaLimit: 65_536)
        defer { running.cancel() }
        _ = await running.pipeline.handle(.available, from: "home")
        let body = String(repeating: "&", count: 64 * 1024)
        #expect(await running.pipeline.handle(.message(Self.message(body, id: "big")), from: "work") == .accepted)
        let parts = await Self.receive(6, from: self.home)
        #expect(parts.count == 6)
        #expect(parts.allSatisfy { DeliverySplitter.escapedSize($0.body) + DeliverySplitter.envelopeBytes <= 65_536 })
    }

    @Test("strangers, empty bodies and echoes of our own relays are not relayed")
    func dropped() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        let pipeline = running.pipeline
        guard case .dropped = await pipeline.handle(.message(Self.message("hi", from: "eve@evil.example", id: "e")), from: "work") else {
            Issue.record("a stranger's message was accepted")
            return
        }
        guard case .dropped = await pipeline.handle(.message(Self.message(nil, id: "chatstate")), from: "work") else {
            Issue.record("an empty message was accepted")
            return
        }
        #expect(await pipeline.handle(.message(Self.message("once", id: "x")), from: "work") == .accepted)
        let relayID = try #require(try running.store.pending(transport: "home", limit: 1).first?.relayID)
        guard case .dropped(let reason) = await pipeline.handle(.message(Self.message("once", id: relayID)), from: "work") else {
            Issue.record("an echo was relayed")
            return
        }
        #expect(reason.contains("echo"))
        #expect(try running.store.pendingCount(transport: "home") == 1)
    }

    @Test("a message handed over twice with the same deduplication key (live, then from the archive) is relayed once, also after a restart; resume points persist")
    func deduplicationKeys() async throws {
        do {
            let running = try await self.start()
            var live = Self.message("once", id: "m1")
            live.deduplicationKey = "archive-1"
            live.resumePoint = ResumePoint("id:archive-1")
            #expect(await running.pipeline.handle(.message(live), from: "work") == .accepted)
            var again = Self.message("once", id: "m1-copy")
            again.deduplicationKey = "archive-1"
            guard case .dropped(let reason) = await running.pipeline.handle(.message(again), from: "work") else {
                Issue.record("a repeat was relayed")
                return
            }
            #expect(reason == "already handled")
            // A stranger's message moves the resume point too, though it is not relayed.
            var stranger = Self.message("spam", from: "eve@evil.example", id: "e1")
            stranger.deduplicationKey = "archive-2"
            stranger.resumePoint = ResumePoint("id:archive-2")
            guard case .dropped = await running.pipeline.handle(.message(stranger), from: "work") else { return }
            _ = await running.pipeline.handle(.resumePointMoved(ResumePoint("id:archive-3")), from: "work")
            await running.journal.flushed()
            #expect(try running.store.resumePoints() == ["work": "id:archive-3"])
            #expect(try running.store.seenDeduplicationKeys(limit: 10) == ["work": ["archive-1", "archive-2"]])
            running.cancel()
        }
        let running = try await self.start()
        defer { running.cancel() }
        var late = Self.message("once", id: "m1-late")
        late.deduplicationKey = "archive-1"
        guard case .dropped = await running.pipeline.handle(.message(late), from: "work") else {
            Issue.record("a repeat after the restart was relayed")
            return
        }
        var fresh = Self.message("new", id: "m2")
        fresh.deduplicationKey = "archive-4"
        #expect(await running.pipeline.handle(.message(fresh), from: "work") == .accepted)
        #expect(try running.store.pending(transport: "home", limit: 10).map(\.originalBody) == ["once", "new"])
    }

    @Test("a stream management state that counts deliveries as acknowledged removes them from the queue in the same write")
    func acknowledgedLeaveTheQueue() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        for index in 1...3 {
            _ = await running.pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work")
        }
        let queued = try running.store.pending(transport: "home", limit: 10)
        #expect(queued.count == 3)
        var state = StoredStreamSession(
            id: "sm-1", location: nil, handled: 0, acknowledged: 2, unacknowledgedIDs: [queued[2].relayID]
        )
        state.acknowledgedIDs = [queued[0].relayID, queued[1].relayID]
        running.journal.record([.streamSession(transport: "home", state)])
        await running.journal.flushed()
        #expect(try running.store.pending(transport: "home", limit: 10).map(\.originalBody) == ["m3"])
        #expect(try running.store.streamSessions()["home"]?.unacknowledgedIDs == [queued[2].relayID])
    }

    @Test("a transport removed while its batch is in flight parks only what it did not deliver (a reload sends nothing twice)")
    func removeWaitsForTheBatchInFlight() async throws {
        let running = try await self.start()
        defer { running.cancel() }
        let held = HeldTransport(name: "held")
        let worker = running.pipeline.makeWorker(for: held, configuration: .init(batchSize: 1, maxAttempts: 3))
        await running.pipeline.add(worker)
        let task = Task { try await worker.run() }
        defer { task.cancel() }
        let channel = RelayChannel(
            name: "link",
            members: [
                ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@a.example"), direction: .in),
                ChannelMember(endpoint: Endpoint(transport: "held", address: "carol@c.example"), direction: .out),
            ]
        )
        await running.pipeline.update(router: Router(channels: [channel], ownJIDs: []))
        for index in 1...2 {
            _ = await running.pipeline.handle(.message(Self.message("m\(index)", id: "src-\(index)")), from: "work")
        }
        _ = await running.pipeline.handle(.available, from: "held")
        // The first batch (m1) is with the transport; the reload removes it now.
        var entered = held.entered.makeAsyncIterator()
        #expect(await entered.next()?.map(\.originalBody) == ["m1"])
        let removal = Task { await running.pipeline.remove(transport: "held") }
        held.release(.delivered)
        await removal.value
        // m1 was delivered by the old transport: only m2 waits for its successor.
        let parked = try await running.pipeline.queueEntries(transport: "held")
        #expect(parked.map(\.delivery.originalBody) == ["m2"])
    }

    // MARK: - Waiting on events

    /// Returns once some task sleeps on the manual clock (a worker armed its backoff timer).
    static func untilSleeping(_ clock: ManualClock) async {
        await clock.waitForSleepers()
    }

    /// Polls `condition` between scheduler turns (bounded); for state reached by other tasks.
    static func until(_ condition: () async throws -> Bool) async throws {
        if try await !untilTrue(condition) { Issue.record("condition not reached") }
    }
}
