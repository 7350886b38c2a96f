import Foundation
import Logging
import TestSupport
import Testing

@testable import XMPP

/// The session's timers on a clock that cannot call back (the commands' `ContinuousClock`):
/// one task sleeps until the earliest deadline. The other unit tests run on the manual
/// clock's callbacks (``CallbackClock``), the daemon's way.
@Suite("XMPPSession: timers in a sleeping task", .timeLimit(.minutes(1)))
struct SessionTimersSleepingTaskTests {
    /// The manual clock seen only as a `Clock`: no callbacks, so the session's timers sleep.
    struct SleepOnlyClock: Clock {
        let base: ManualClock
        var now: ManualClock.Instant { self.base.now }
        var minimumResolution: Duration { self.base.minimumResolution }

        func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
            try await self.base.sleep(until: deadline, tolerance: tolerance)
        }
    }

    @Test("a server that stops acknowledging is dropped by the watchdog, a timer asleep in a task, and the message goes again on the resumed stream")
    func watchdogInASleepingTask() async throws {
        let clock = SleepOnlyClock(base: ManualClock())
        let server = SessionTestServer(jid: SessionScene.account)
        // Its count is exact: what it did not count goes again at once.
        server.software = "Prosody"
        let configuration = XMPPSession<SleepOnlyClock>.Configuration(
            client: XMPPClientConfiguration(jid: SessionScene.account), initialPresence: nil, fetchRoster: false, enableCarbons: false,
            session: SessionScene.software, reconnect: .init(initialDelay: .zero)
        )
        let session = XMPPSession(
            configuration: configuration, password: "pw", client: server, clock: clock, ids: StanzaIDGenerator(prefix: "s"), logger: Logger(label: "session-test")
        )
        #expect(!(clock as Any is any CallbackClock), "the test would not reach the sleeping task")
        let running = Task { await session.run() }
        var link = try await server.nextLink()
        var events = session.events.makeAsyncIterator()
        while let event = await events.next() {
            if case .online = event { break }
        }
        let sender = Task { try await session.sendAcknowledged([Message(type: .chat, to: try JID("bob@example.test"), id: "m1", body: "m1")]) }
        _ = try await link.expect("message m1") { $0.name == "message" && $0[attribute: "id"] == "m1" }
        _ = try await link.expect("a request for an acknowledgement", streamManagement: true) { $0.name == "r" }
        server.answerResumptions(["<resumed xmlns='urn:xmpp:sm:3' previd='PREVID' h='\(link.received - 1)'/>"])
        clock.base.advance(by: configuration.acknowledgementTimeout)
        link = try await server.nextLink()
        _ = try await link.expect("message m1 again") { $0.name == "message" && $0[attribute: "id"] == "m1" }
        _ = try await link.expect("a request for an acknowledgement", streamManagement: true) { $0.name == "r" }
        try await link.send("<a xmlns='urn:xmpp:sm:3' h='\(link.received)'/>")
        try await sender.value
        let serving = Task { while !Task.isCancelled { _ = try await link.next() } }
        await session.stop()
        await running.value
        serving.cancel()
    }
}
