/// Keeping a session's connection alive (XEP-0199, or XEP-0198's `<r/>` on a stream that
/// counts): the ``KeepaliveStateMachine`` of the connection, on the session's timers
/// (``SessionTimers/Kind/keepalive``): a ping after `idlePingInterval` without traffic;
/// nothing back within `pingTimeout` closes the connection, which the session treats as a
/// loss. One timer per interval while the link is quiet, and no task of its own.
enum SessionKeepalive<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// Arms the keepalive's timer for the machine's next deadline.
    static func arm(in session: isolated XMPPSession<C>) {
        if let deadline = session.current.keepalive.nextDeadline { session.armTimer(.keepalive, at: deadline) }
    }

    /// The keepalive's timer fired: a ping, the connection given up, or (traffic since)
    /// nothing; armed again for the next deadline while the connection lasts.
    static func fired(on connection: XMPPConnection, in session: isolated XMPPSession<C>) async {
        switch session.current.keepalive.timerFired(now: session.dependencies.clock.now) {
        case .wait:
            break
        case .sendPing where session.streamManagement.machine.isCounting:
            // With stream management, `<r/>` is the ping: the server must answer `<a/>`
            // (XEP-0198 §4). No IQ to track, no stanza counted, so no `<r/>` after it: one
            // round trip where an IQ ping costs two, for each of 10,000 idle accounts once
            // a minute (issue 43). The answer, like any traffic, resets the machine.
            // The watchdog is armed here (``XMPPSession/prepareTransmit(_:)``), before this
            // timer is armed again: the timers' wake-up is then set for the earlier of the two
            // once, instead of being replaced in its sleep (a scheduled task cancelled, a
            // linear search of the event loop's 10,000 others). The write goes beside.
            let request = [session.streamManagement.machine.requestAck()]
            session.prepareTransmit(request)
            session.spawn { _ in try? await connection.send(request) }
        case .sendPing:
            let ping = IQ(type: .get, id: session.dependencies.ids.next(), payload: XMLElement(name: "ping", namespace: "urn:xmpp:ping"))
            let timeout = session.dependencies.configuration.pingTimeout
            session.spawn { session in _ = try? await session.request(ping, timeout: timeout) }
        case .connectionDead:
            session.dependencies.logger.warning("server did not answer a ping; treating the connection as dead")
            await connection.abort()
            return
        }
        self.arm(in: session)
    }
}
