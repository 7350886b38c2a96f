import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// The session's keepalive on a manual clock against a real Prosody (issue 8: the
/// session's jobs as machines; the issue-3 note left this untested at the actor level).
@Suite("session keepalive against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(2)))
struct KeepaliveIntegrationTests {
    @Test("a frozen server: a ping (`<r/>`) after 60 quiet seconds, the connection given up 20 s later, and back after the server thaws")
    func frozenServer() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer {
            server.resume()
            server.shutdown()
        }
        let clock = ManualClock()
        let session = XMPPSession(
            configuration: .init(
                client: try IntegrationEnvironment.configuration("alice", on: server, resource: "keepalive"),
                // Carbons are enabled after "online": their requests' timers would sleep on
                // the manual clock beside the keepalive's.
                enableCarbons: false,
                session: .init(softwareName: "keepalive-test", softwareVersion: "1.0", capabilitiesNode: "https://example.org/keepalive-test"),
                reconnect: .init(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: 0),
                // No acknowledgement watchdog: the keepalive's own give-up is what is tested.
                acknowledgementTimeout: .zero
            ),
            password: "pw",
            client: XMPPClient(logger: IntegrationEnvironment.logger("keepalive-test")),
            clock: clock,
            ids: StanzaIDGenerator(prefix: "ka"),
            logger: IntegrationEnvironment.logger("keepalive-test")
        )
        let log = EventLog()
        let task = Task {
            Task { for await event in session.events { await log.append(event) } }
            await session.run()
        }
        defer { task.cancel() }
        #expect(await log.waitFor(timeout: .seconds(60), { if case .online = $0 { true } else { false } }) != nil)
        // The server's echo of our presence is the last traffic of the login; traffic that
        // arrived after the clock moved would put the ping off by a minute.
        #expect(await log.waitFor({ if case .presence = $0 { true } else { false } }) != nil)

        server.pause()
        // The keepalive sleeps on the manual clock: nothing happens until time moves.
        await clock.waitForSleepers()
        clock.advance(by: .seconds(60))  // ping (stream management's `<r/>`) goes out, unanswered
        await clock.waitForSleepers()  // the timers, now until the ping's timeout
        clock.advance(by: .seconds(20))
        let offline = await log.waitFor { if case .offline = $0 { true } else { false } }
        let afterFreeze = await log.events
        #expect(offline != nil, "the session did not give up the frozen connection: \(afterFreeze)")

        server.resume()
        // The reconnect backoff (1 s) is on the manual clock too: each time its timer is
        // armed, time moves on and the test waits for the session to come back online.
        let mark = await log.events.count
        var back = false
        for _ in 0..<60 where !back {
            await clock.waitForSleepers()
            clock.advance(by: .seconds(1))
            back = await log.waitFor(after: mark, timeout: .milliseconds(500)) { if case .online = $0 { true } else { false } } != nil
        }
        let afterThaw = await log.events
        #expect(back, "the session did not come back: \(afterThaw)")
        await session.stop()
        await task.value
    }
}
