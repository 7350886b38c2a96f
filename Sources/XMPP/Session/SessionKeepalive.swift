/// Keeping a session's connection alive (XEP-0199): runs the ``KeepaliveStateMachine`` of
/// the connection: a ping after `idlePingInterval` without traffic; nothing back within
/// `pingTimeout` closes the connection, which the session treats as a loss. One sleep per
/// interval while the link is quiet.
enum SessionKeepalive<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// Runs while the connection lasts (a task of its group: cancelled with it).
    static func run(on connection: XMPPConnection, in session: isolated XMPPSession<C>) async {
        while !Task.isCancelled, let deadline = session.current.keepalive.nextDeadline {
            do {
                try await session.dependencies.clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            switch session.current.keepalive.timerFired(now: session.dependencies.clock.now) {
            case .wait:
                continue
            case .sendPing:
                // The answer, like any other traffic, resets the machine.
                let ping = IQ(type: .get, id: session.dependencies.ids.next(), payload: XMLElement(name: "ping", namespace: "urn:xmpp:ping"))
                let timeout = session.dependencies.configuration.pingTimeout
                session.spawn { session in _ = try? await session.request(ping, timeout: timeout) }
            case .connectionDead:
                session.dependencies.logger.warning("server did not answer a ping; treating the connection as dead")
                await connection.abort()
                return
            }
        }
    }
}
