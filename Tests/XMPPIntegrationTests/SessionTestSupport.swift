import EmbeddedProsody
import Foundation
import Logging
import XMPP

/// Collects a session's events so a test can wait for the one it expects.
actor EventLog {
    private(set) var events: [XMPPSessionEvent] = []

    func append(_ event: XMPPSessionEvent) {
        self.events.append(event)
    }

    /// Waits until an event satisfying `predicate` arrived (checking those already seen).
    func waitFor(
        timeout: Duration = .seconds(10),
        _ predicate: @Sendable (XMPPSessionEvent) -> Bool
    ) async -> XMPPSessionEvent? {
        let deadline = ContinuousClock.now + timeout
        var index = 0
        while ContinuousClock.now < deadline {
            while index < self.events.count {
                let event = self.events[index]
                index += 1
                if predicate(event) { return event }
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    var messages: [Message] {
        self.events.compactMap {
            if case .message(let message, nil) = $0 { return message }
            return nil
        }
    }
}

/// A running session of one test account.
struct TestSession {
    let session: XMPPSession<ContinuousClock>
    let log: EventLog
    let task: Task<Void, Never>
    let jid: JID

    static func start(
        _ user: String,
        on server: ProsodyServer,
        resource: String = "test",
        presence: Presence? = Presence(),
        policy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy = .acceptKnown,
        reconnect: ReconnectStateMachine<ContinuousClock>.Configuration = .init(initialDelay: .milliseconds(200), maximumDelay: .seconds(2))
    ) async throws -> TestSession {
        let configuration = try IntegrationEnvironment.configuration(user, on: server, resource: resource)
        let session = XMPPSession(
            configuration: .init(
                client: configuration, initialPresence: presence,
                session: .init(subscriptionPolicy: policy), reconnect: reconnect
            ),
            password: "pw",
            client: XMPPClient(logger: IntegrationEnvironment.logger("session-test")),
            clock: ContinuousClock(),
            ids: StanzaIDGenerator(prefix: user),
            logger: IntegrationEnvironment.logger("session-test")
        )
        let log = EventLog()
        let task = Task {
            Task { for await event in session.events { await log.append(event) } }
            await session.run()
        }
        guard await log.waitFor({ if case .online = $0 { true } else { false } }) != nil else {
            task.cancel()
            throw TestFailure("\(user) did not come online: \(await log.events)")
        }
        return TestSession(session: session, log: log, task: task, jid: configuration.jid)
    }

    func stop() async {
        await self.session.stop()
        await self.task.value
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
