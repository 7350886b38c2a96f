import Foundation
import Logging
import TestServers
import TestSupport
import XMPP

/// A running session of one test account.
public struct TestSession {
    public let session: XMPPSession<ContinuousClock>
    public let log: EventLog
    public let task: Task<Void, Never>
    public let jid: JID

    public static func start(
        _ user: String,
        on server: any TestXMPPServer,
        resource: String = "test",
        presence: Presence? = Presence(),
        policy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy = .acceptKnown,
        reconnect: ReconnectStateMachine<ContinuousClock>.Configuration = .init(initialDelay: .milliseconds(200), maximumDelay: .seconds(2)),
        rooms: [RoomConfiguration] = [],
        catchUp: ArchiveCatchUpStateMachine.Configuration? = nil,
        acknowledgementTimeout: Duration = .seconds(5),
        sasl2: SASL2Login? = nil,
        logger: Logger = IntegrationEnvironment.logger("session-test")
    ) async throws -> TestSession {
        var configuration = try IntegrationEnvironment.configuration(user, on: server, resource: resource)
        configuration.sasl2 = sasl2
        let session = XMPPSession(
            configuration: .init(
                client: configuration, initialPresence: presence,
                session: .init(softwareName: "session-test", softwareVersion: "1.0", capabilitiesNode: "https://example.org/session-test", subscriptionPolicy: policy), reconnect: reconnect, catchUp: catchUp,
                acknowledgementTimeout: acknowledgementTimeout, rooms: rooms
            ),
            password: "pw",
            client: XMPPClient(logger: IntegrationEnvironment.logger("session-test")),
            clock: ContinuousClock(),
            ids: StanzaIDGenerator(prefix: user),
            logger: logger
        )
        let log = EventLog()
        let task = Task {
            Task { for await event in session.events { await log.append(event) } }
            await session.run()
        }
        // A bound on failure only: a full run starts dozens of servers at once, and on a slow
        // 2-core machine the first logins waited that long for their servers' CPU.
        guard await log.waitFor(timeout: .seconds(60), { if case .online = $0 { true } else { false } }) != nil else {
            task.cancel()
            throw TestFailure("\(user) did not come online: \(await log.events)")
        }
        let started = TestSession(session: session, log: log, task: task, jid: configuration.jid)
        for room in rooms {
            guard await started.waitForRoom(room.jid, state: .joined) != nil else {
                task.cancel()
                throw TestFailure("\(user) did not join \(room.jid): \(await session.roomStatuses)")
            }
        }
        return started
    }

    /// Waits until `room` reports `state` (after the events seen so far, too).
    public func waitForRoom(_ room: JID, state: RoomStatus.State, after start: Int = 0, timeout: Duration = .seconds(15)) async -> RoomStatus? {
        let event = await self.log.waitFor(after: start, timeout: timeout) {
            if case .roomChanged(let status) = $0 { return status.jid == room.description && status.state == state }
            return false
        }
        if case .roomChanged(let status) = event { return status }
        return nil
    }

    /// Says `body` in `room` (a groupchat message); returns its id.
    @discardableResult
    public func say(_ body: String, in room: JID) async throws -> String {
        let id = await self.session.nextID()
        var message = Message(type: .groupchat, to: room, id: id, body: body)
        message.extensions.append(OriginID.element(id))
        try await self.session.send(message)
        return id
    }

    /// The groupchat messages received from `room` so far, as (nick, body), in order.
    public func roomMessages(_ room: JID) async -> [(nick: String, body: String)] {
        await self.log.messages.compactMap { message in
            guard message.type == .groupchat, message.from?.bare == room, let nick = message.from?.resourcepart, let body = message.body else { return nil }
            return (nick, body)
        }
    }

    /// Waits until `room` has a message whose body satisfies `predicate`.
    public func waitForRoomMessage(_ room: JID, timeout: Duration = .seconds(15), _ predicate: @escaping @Sendable (String) -> Bool) async -> Message? {
        let event = await self.log.waitFor(timeout: timeout) {
            if case .message(let message, nil) = $0 { return message.type == .groupchat && message.from?.bare == room && message.body.map(predicate) == true }
            return false
        }
        if case .message(let message, _) = event { return message }
        return nil
    }

    /// Waits until the server reports (XEP-0012 uptime, whole seconds) having run at least
    /// `seconds`; false when it never does within `timeout`. After a loss the bridge asks
    /// the uptime to tell a restart from a lost session, so a server not two seconds older
    /// than an outage looks restarted; production servers are older, and so is a test's
    /// server once this returns.
    public func waitForServerUptime(atLeast seconds: Int, timeout: Duration = .seconds(20)) async -> Bool {
        guard let domain = try? JID(self.jid.domainpart) else { return false }
        return await eventually(timeout: timeout, every: .milliseconds(250)) {
            let answer = try? await self.session.request(IQ(type: .get, id: await self.session.nextID(), to: domain, payload: XMLElement(name: "query", namespace: "jabber:iq:last")))
            return (answer?.payload?[attribute: "seconds"].flatMap { Int($0) } ?? 0) >= seconds
        }
    }

    public func stop() async {
        await self.session.stop()
        await self.task.value
    }
}
