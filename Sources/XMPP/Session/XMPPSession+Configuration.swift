import Foundation

extension XMPPSession {
    /// What the session connects to and how it behaves.
    public typealias Configuration = XMPPSessionConfiguration<C>

    /// Why no connection may be made now (``Configuration/mayConnect`` says no), if so: a
    /// failed attempt for the reconnect machine (its backoff applies; the owner stops the
    /// session soon after).
    func connectionNotPermitted() -> XMPPClientError? {
        guard let mayConnect = self.dependencies.configuration.mayConnect, !mayConnect() else { return nil }
        return .connectFailed(attempts: ["not connecting: this process may not work on the account now"])
    }
}
