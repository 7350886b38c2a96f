/// What asks an entity and waits for its answer (RFC 6120 §8.2.3): the account's session,
/// for the features built on requests outside it (``HTTPFileUpload``).
public protocol IQRequester: Sendable {
    /// Sends an IQ get/set and returns its `result`; an `error` answer throws
    /// ``XMPPSessionError/stanzaError(_:)``, no answer in time ``XMPPSessionError/timedOut(id:)``.
    func request(_ iq: IQ, timeout: Duration?) async throws -> IQ
    /// A fresh stanza id.
    func nextID() async -> String
    /// The full JID bound now; nil while not connected.
    var boundJID: JID? { get async }
}
