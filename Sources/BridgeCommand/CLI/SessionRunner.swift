import Bridge
import Foundation
import Logging
import XMPP

/// Runs an ``XMPPSession`` for a command: starts it, waits until it is online (or fails),
/// and turns failures into exit statuses.
struct SessionRunner {
    let session: XMPPSession<ContinuousClock>
    private let task: Task<Void, Never>

    /// Starts `session` and waits for it to come online; throws the exit status on failure.
    static func start(_ session: XMPPSession<ContinuousClock>, events: inout SessionEventStream.AsyncIterator) async throws -> SessionRunner {
        let task = Task { await session.run() }
        while let event = await events.next() {
            switch event {
            case .online:
                return SessionRunner(session: session, task: task)
            case .stopped(let error):
                let status = error.map(ExitStatus.init) ?? .connect
                CommandLineOutput.error(error.map { "\($0)" } ?? "session stopped")
                throw status.exitCode
            case .offline, .message, .presence, .subscriptionRequest, .subscriptionChanged, .rosterChanged, .rosterFetched, .resumedAfterRestart, .archiveCursorMoved,
                .roomChanged, .occupant, .roomCursorMoved, .copyStanzaID:
                continue
            }
        }
        throw ExitStatus.connect.exitCode
    }

    private init(session: XMPPSession<ContinuousClock>, task: Task<Void, Never>) {
        self.session = session
        self.task = task
    }

    /// Stops the session cleanly and waits for its run loop to end.
    func stop() async {
        await self.session.stop()
        await self.task.value
    }

    /// Builds a session for a command from account options.
    static func makeSession(
        _ account: AccountOptions,
        presence: Presence?,
        fetchRoster: Bool,
        reconnects: Bool,
        logger: Logger
    ) throws -> XMPPSession<ContinuousClock> {
        let (configuration, password, policy) = try account.load()
        var nonce = SystemRandomNumberGenerator()
        return XMPPSession(
            configuration: .init(
                client: configuration,
                initialPresence: presence,
                fetchRoster: fetchRoster,
                enableCarbons: false,
                session: BridgeIdentity.session(subscriptionPolicy: policy),
                reconnects: reconnects
            ),
            password: password,
            client: XMPPClient(logger: logger),
            clock: ContinuousClock(),
            ids: StanzaIDGenerator(prefix: String(nonce.next() % 1_000_000_000, radix: 36)),
            logger: logger
        )
    }
}
