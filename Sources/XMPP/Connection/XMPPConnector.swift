/// What opens a session's connections: ``XMPPClient`` over TCP and TLS to a server
/// (RFC 6120 §3–§7); in unit tests, a connection over an in-memory channel, so that
/// ``XMPPSession`` runs without a server.
public protocol XMPPConnector: Sendable {
    /// Connects, negotiates and binds (resuming `resume`, XEP-0198 §5, if given).
    func connect(
        configuration: XMPPClientConfiguration, password: String, resume: StreamNegotiationStateMachine.ResumeRequest?
    ) async throws(XMPPClientError) -> XMPPConnection
}

extension XMPPClient: XMPPConnector {}
