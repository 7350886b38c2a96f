import XMPP

/// What an account's OMEMO device needs of its session: PEP requests (XEP-0060 IQs) and
/// key transports sent. ``XMPPSession`` is one; a test's recorder is another.
protocol OMEMOLink: Sendable {
    func request(_ iq: IQ, timeout: Duration?) async throws -> IQ
    func send(_ message: Message) async throws
    func nextID() async -> String
}

extension XMPPSession: OMEMOLink {}
