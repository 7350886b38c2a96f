/// The synchronous steps of connecting (``XMPPSession/run()``): what the configuration and a
/// login's result lead to. Synchronous on purpose: reading the configuration copies it
/// (1.4 KB), on the thread's stack here, where an async function would keep the copy in its
/// frame, and the session's task keeps its deepest stack of frames for life
/// (docs/performance.md).
extension XMPPSession {
    /// What logging in led to: a connection to serve (with what the reconnect machine says
    /// if nothing follows), one to close (the session is stopping), or the next action
    /// already (nil: stopped or cancelled).
    enum ConnectStep {
        case serve(XMPPConnection, next: ReconnectStateMachine<C>.Action)
        case unwanted(XMPPConnection)
        case done(ReconnectStateMachine<C>.Action?)
    }

    /// The reconnect machine, made outside ``run()``'s frame.
    @inline(never)
    func makeReconnect() -> ReconnectStateMachine<C> {
        ReconnectStateMachine<C>(configuration: self.dependencies.configuration.reconnect) { Double.random(in: $0) }
    }

    /// Whether the configuration refuses to connect: the next action then.
    @inline(never)
    func refused(_ reconnect: inout ReconnectStateMachine<C>, lastError: inout XMPPClientError?) -> ConnectStep? {
        guard let refused = self.dependencies.configuration.connectionRefusal() else { return nil }
        lastError = refused
        return .done(reconnect.connectFailed(refused, now: self.dependencies.clock.now))
    }

    /// What a login's result leads to.
    @inline(never)
    func connected(
        _ login: Result<XMPPConnection, XMPPClientError>, _ reconnect: inout ReconnectStateMachine<C>, lastError: inout XMPPClientError?
    ) -> ConnectStep {
        do throws(XMPPClientError) {
            let connection = try login.get()
            if self.lifecycle.isStopping || Task.isCancelled { return .unwanted(connection) }
            let next = reconnect.connectSucceeded()
            self.dependencies.configuration.connectionNotices?.settled()
            return .serve(connection, next: next)
        } catch {
            lastError = error
            guard self.dependencies.configuration.reconnects else { return .done(.giveUp(error)) }
            return .done(reconnect.connectFailed(error, now: self.dependencies.clock.now))
        }
    }
}
