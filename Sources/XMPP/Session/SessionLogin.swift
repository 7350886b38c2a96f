/// Connecting and logging in for the session (RFC 6120 §5–§7: TLS, SASL, bind; XEP-0198 §5
/// resumption): the connector, the account's password, and its place in the process's
/// login queue for the server (``ConnectionGate``), held only while connecting. A service
/// the session calls (it does the I/O of connecting), not a state of it.
struct SessionLogin: Sendable {
    let connector: any XMPPConnector
    let password: String
    let gate: ConnectionGate?
    /// The SASL2 user agent and FAST token kept between logins (only with SASL2).
    let kept: LoginStateKeeper?

    /// Connects with `configuration`, asking to resume `resume`; nil when cancelled while
    /// waiting in the login queue. The negotiation runs in a child task of its own: its deep
    /// async frames go when it ends, not when the session does.
    func connect(_ configuration: XMPPClientConfiguration, resume: StreamNegotiationStateMachine.ResumeRequest?) async -> Result<XMPPConnection, XMPPClientError>? {
        if let gate = self.gate {
            do {
                try await gate.acquire()
            } catch {
                return nil
            }
        }
        defer { self.gate?.release() }
        let (connector, password, kept) = (self.connector, self.password, self.kept)
        var prepared = configuration
        if let kept, let login = prepared.sasl2 { prepared.sasl2 = kept.prepare(login) }
        let configuration = prepared
        return await withTaskGroup(of: Result<XMPPConnection, XMPPClientError>.self) { group in
            group.addTask {
                do throws(XMPPClientError) {
                    let connection = try await connector.connect(configuration: configuration, password: password, resume: resume)
                    kept?.update(after: connection.login)
                    return .success(connection)
                } catch {
                    if case .authenticationFailed = error, configuration.sasl2?.token != nil { kept?.forgetToken() }
                    return .failure(error)
                }
            }
            return await group.next() ?? .failure(XMPPClientError.connectFailed(attempts: ["cancelled"]))
        }
    }
}
