import Logging
import NIOConcurrencyHelpers
import XMPP

/// A gateway's connection to its server (XEP-0114), kept up: reconnects with backoff
/// (``ReconnectStateMachine``, as accounts do), checks the link with a ping to the server
/// every `keepalive` (XEP-0199; no answer within `requestTimeout` drops it) and matches
/// answers to our requests.
///
/// A component stream has no stream management: a ping's answer (the *round trip*) shows
/// that the server took everything written before it (it handles a stream's stanzas in order).
/// `ledger` records each message's id right before it is written and the answered count
/// after each answer, so a bridge killed at any instant finds on restart what it had
/// handed over (the same memory-mapped file accounts use for XEP-0198 positions).
actor ComponentConnection<C: Clock> where C.Duration == Swift.Duration, C.Instant: Sendable {
    /// What the link reports.
    struct Callbacks: Sendable {
        var online: @Sendable () async -> Void
        var element: @Sendable (XMLElement) async -> Void
        var offline: @Sendable (XMPPClientError?) async -> Void
        var stopped: @Sendable (XMPPClientError) async -> Void
    }

    enum LinkError: Error, CustomStringConvertible {
        case notConnected
        case lost(XMPPClientError?)
        case timedOut(String)
        case refused(StanzaError)

        var description: String {
            switch self {
            case .notConnected: "component not connected"
            case .lost(let error): "component connection lost" + (error.map { ": \($0)" } ?? "")
            case .timedOut(let what): "no answer to \(what) in time"
            case .refused(let error): "refused: \(error)"
            }
        }

        /// A privileged request (XEP-0356) the server refused, or left unanswered on a link
        /// that still stands: the privilege it granted cannot be used.
        var privilegeUnusable: Bool {
            switch self {
            case .refused, .timedOut: true
            case .notConnected, .lost: false
            }
        }
    }

    private let configuration: XMPPComponentClient.Configuration
    private let secret: String
    private let client: XMPPComponentClient
    private var reconnect: ReconnectStateMachine<C>
    private let clock: C
    private let keepalive: Duration
    private let requestTimeout: Duration
    /// Where pings and keepalives go: the server's own domain.
    let serverDomain: JID
    private var ids: StanzaIDGenerator
    private let ledger: (any StreamPositionLedger)?
    private let logger: Logger

    private var connection: XMPPConnection?
    /// Answers awaited, by request id, with the address the answer must come from:
    /// registered before the request is written.
    private var pending: [String: (slot: AnswerSlot, from: String)] = [:]
    /// Messages written on this connection, for the ledger's numbering.
    private var written: UInt32 = 0
    private var stopping = false
    private var waitTask: Task<Void, Never>?

    init(
        configuration: XMPPComponentClient.Configuration, secret: String, client: XMPPComponentClient, reconnect: ReconnectStateMachine<C>.Configuration,
        clock: C, keepalive: Duration, requestTimeout: Duration, serverDomain: JID, ids: StanzaIDGenerator, ledger: (any StreamPositionLedger)?,
        logger: Logger
    ) {
        self.configuration = configuration
        self.secret = secret
        self.client = client
        self.reconnect = ReconnectStateMachine(configuration: reconnect, random: { Double.random(in: $0) })
        self.clock = clock
        self.keepalive = keepalive
        self.requestTimeout = requestTimeout
        self.serverDomain = serverDomain
        self.ids = ids
        self.ledger = ledger
        self.logger = logger
    }

    var isConnected: Bool { self.connection != nil }

    /// Connects, and again after each loss, until ``stop()`` or a permanent error.
    func run(_ callbacks: Callbacks) async {
        var action = self.reconnect.start()
        while !self.stopping {
            switch action {
            case .none:
                return
            case .giveUp(let error):
                self.logger.error("component gave up", metadata: ["error": "\(error)"])
                await callbacks.stopped(error)
                return
            case .wait(let until):
                let clock = self.clock
                let task = Task { _ = try? await clock.sleep(until: until, tolerance: nil) }
                self.waitTask = task
                await task.value
                self.waitTask = nil
                action = self.reconnect.timerFired(now: self.clock.now)
            case .connect:
                let connection: XMPPConnection
                do {
                    connection = try await self.client.connect(self.configuration, secret: self.secret)
                } catch {
                    self.logger.notice("component connection failed", metadata: ["error": "\(error)"])
                    await callbacks.offline(error)
                    action = self.reconnect.connectFailed(error, now: self.clock.now)
                    continue
                }
                if self.stopping {
                    await connection.close()
                    return
                }
                action = self.reconnect.connectSucceeded()
                let error = await self.serve(connection, callbacks: callbacks)
                action = self.stopping ? .none : self.reconnect.connectionLost(error, now: self.clock.now)
            }
        }
    }

    /// Reads `connection` until it closes; its error, if any.
    private func serve(_ connection: XMPPConnection, callbacks: Callbacks) async -> XMPPClientError? {
        self.connection = connection
        self.written = 0
        var random = SystemRandomNumberGenerator()
        self.ledger?.begin(sessionID: "component-\(random.next())", acknowledged: 0)
        await callbacks.online()
        let keepalive = Task { await self.keepAlive(connection) }
        for await element in connection.elements {
            if element.name == "iq", let id = element[attribute: "id"], element[attribute: "type"] == "result" || element[attribute: "type"] == "error",
                let waiting = self.pending[id], Self.sameAddress(element[attribute: "from"], waiting.from)
            {
                self.pending[id] = nil
                waiting.slot.settle(.success(element))
                continue
            }
            await callbacks.element(element)
        }
        keepalive.cancel()
        let error = await connection.closed()
        if self.connection === connection { self.connection = nil }
        // What was written but not answered is sent again on the next connection.
        self.ledger?.end()
        for (_, waiting) in self.pending { waiting.slot.settle(.failure(LinkError.lost(error))) }
        self.pending.removeAll()
        if !self.stopping {
            self.logger.warning("component connection lost", metadata: ["error": "\(error.map { "\($0)" } ?? "closed")"])
            await callbacks.offline(error)
        }
        return error
    }

    /// Pings the server every `keepalive`; a missing answer drops the connection.
    private func keepAlive(_ connection: XMPPConnection) async {
        guard self.keepalive > .zero else { return }
        while !Task.isCancelled {
            guard (try? await self.clock.sleep(for: self.keepalive)) != nil else { return }
            do {
                _ = try await self.ping()
            } catch {
                guard !Task.isCancelled else { return }
                self.logger.warning("component keepalive failed; dropping the connection", metadata: ["error": "\(error)"])
                await connection.abort()
                return
            }
        }
    }

    /// Writes `elements` with one flush.
    func send(_ elements: [XMLElement]) async throws {
        guard let connection = self.connection else { throw LinkError.notConnected }
        try await connection.send(elements)
    }

    /// Writes `messages` in chunks of at most ``chunkBytes``, each message followed by a
    /// ping, and writes the next chunk only once the server answered every ping of the
    /// last (it handles a stream's stanzas in order, so each answer vouches for its message);
    /// then calls `written`. Returns how many (from the first) were answered, and why the
    /// rest were not. A link lost midway leaves in doubt only what the server read but had
    /// not answered yet; it goes again.
    ///
    /// One chunk at a time is what makes a chunk safe the moment it is written: the server
    /// has read and answered everything before it, so both sockets' buffers are empty and
    /// the chunk, which fits the server's receive buffer, leaves this process's socket at
    /// once; the kernel keeps it for the server even if this process dies (its own send
    /// buffer it would discard on a reset). Writing more while answers are outstanding
    /// lost messages on kill -9 in measurements. The ledger marks each message's id as being
    /// written, records it once its chunk is in the kernel, and the count the answers
    /// reach; a restart counts the recorded as delivered and sends again (and reports)
    /// those only marked: a process killed between the write and its record.
    func sendWithRoundTrips(_ messages: [(id: String, element: XMLElement, bytes: Int)], written: @Sendable () -> Void) async -> (answered: Int, error: (any Error)?) {
        defer { written() }
        guard let connection = self.connection else { return (0, LinkError.notConnected) }
        let ledger = self.ledger
        var answered = 0
        while answered < messages.count {
            // The next chunk: at least one message, at most chunkBytes.
            var end = answered
            var bytes = 0
            while end < messages.count, end == answered || bytes + messages[end].bytes <= Self.chunkBytes {
                bytes += messages[end].bytes
                end += 1
            }
            var elements: [XMLElement] = []
            var slots: [AnswerSlot] = []
            elements.reserveCapacity((end - answered) * 2)
            let first = self.written &+ 1
            for message in messages[answered..<end] {
                let ping = self.pingRequest()
                elements.append(message.element)
                elements.append(ping)
                slots.append(self.expectAnswer(to: ping))
            }
            self.written &+= UInt32(end - answered)
            let ids = messages[answered..<end].map(\.id)
            let timer = self.expire(slots)
            defer { timer.cancel() }
            var failure: (any Error)?
            for (offset, id) in ids.enumerated() { ledger?.writing(first &+ UInt32(offset), id: id) }
            do {
                let last = first &+ UInt32(ids.count - 1)
                try await connection.send(elements) { ledger?.written(through: last) }
            } catch {
                // Part of the write may have gone out and be answered: those answers are
                // still read before the connection's end fails the rest.
                failure = LinkError.lost(nil)
            }
            for (offset, slot) in slots.enumerated() {
                do {
                    _ = try await slot.answer()
                } catch {
                    return (answered, failure ?? error)
                }
                if self.connection === connection { ledger?.acknowledged(through: first &+ UInt32(offset)) }
                answered += 1
            }
            if let failure { return (answered, failure) }
        }
        return (answered, nil)
    }

    /// At most this many bytes of messages are written before the server answered them
    /// all: well inside a loopback socket's default receive buffer (128 KiB).
    static var chunkBytes: Int { 16 * 1024 }

    /// A slot for the answer to `request` (its id), registered before it is written.
    private func expectAnswer(to request: XMLElement) -> AnswerSlot {
        let slot = AnswerSlot()
        if let id = request[attribute: "id"] { self.pending[id] = (slot, request[attribute: "to"] ?? "") }
        return slot
    }

    /// Whether an answer's `from` is the request's `to` (bare JIDs compare lower-cased; a
    /// request to a user's bare JID is answered by her server from that JID).
    static func sameAddress(_ from: String?, _ to: String) -> Bool {
        (from ?? "").lowercased() == to.lowercased()
    }

    /// Fails whichever of `slots` are still open after the request timeout.
    private func expire(_ slots: [AnswerSlot], after timeout: Duration? = nil) -> Task<Void, Never> {
        let clock = self.clock
        let timeout = timeout ?? self.requestTimeout
        return Task {
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            self.expire(slots: slots)
        }
    }

    private func expire(slots: [AnswerSlot]) {
        for slot in slots { slot.settle(.failure(LinkError.timedOut("the server's answer"))) }
        self.pending = self.pending.filter { entry in !slots.contains { $0 === entry.value.slot } }
    }

    /// A ping to the server, answered (a result or an error: either proves the link, see
    /// ``pingAddress``).
    func ping() async throws -> XMLElement {
        guard let connection = self.connection else { throw LinkError.notConnected }
        return try await self.request(self.pingRequest(), on: connection, errorRefuses: false)
    }

    /// Sends the request `iq` (its id set here) and waits for its answer, at most `timeout`
    /// (the link's request timeout when nil).
    func request(_ iq: XMLElement, timeout: Duration? = nil) async throws -> XMLElement {
        guard let connection = self.connection else { throw LinkError.notConnected }
        var iq = iq
        iq[attribute: "id"] = self.ids.next()
        return try await self.request(iq, on: connection, timeout: timeout)
    }

    /// `errorRefuses`: an error answer throws ``LinkError/refused(_:)``; otherwise it is an
    /// answer like a result (a ping's, which only shows the link).
    private func request(_ iq: XMLElement, on connection: XMPPConnection, timeout: Duration? = nil, errorRefuses: Bool = true) async throws -> XMLElement {
        let slot = self.expectAnswer(to: iq)
        let timer = self.expire([slot], after: timeout)
        defer { timer.cancel() }
        connection.write(iq)
        let answer = try await slot.answer()
        if errorRefuses, answer[attribute: "type"] == "error" {
            throw LinkError.refused(StanzaError(stanza: answer) ?? StanzaError(.undefinedCondition))
        }
        return answer
    }

    /// Where pings go: the server's domain with a resource (RFC 6120 §8.5.2 has the server
    /// answer for it, Prosody with a result, ejabberd with an error), not the bare domain:
    /// ejabberd 24.12 (Debian 13's) drops every IQ a component sends to a bare JID once
    /// mod_privilege is loaded, unless it is a privileged or a roster one (fixed in 25.03,
    /// ejabberd a4062f6). Either answer comes after the server handled what was written
    /// before the ping, which is all a round trip needs.
    static func pingAddress(serverDomain: JID) -> JID {
        (try? JID(domainpart: serverDomain.domainpart, resourcepart: pingResource)) ?? serverDomain
    }

    static var pingResource: String { "xmpp-bridge-ping" }

    private func pingRequest() -> XMLElement {
        var iq = IQ(type: .get, id: self.ids.next(), to: Self.pingAddress(serverDomain: self.serverDomain), payload: XMLElement(name: "ping", namespace: GatewayDirectory.Namespace.ping))
        iq.header.from = try? JID(self.configuration.domain)
        return iq.element
    }

    /// Closes the connection and ends ``run(_:)``.
    func stop() async {
        self.stopping = true
        _ = self.reconnect.stop()
        self.waitTask?.cancel()
        if let connection = self.connection {
            await connection.close()
        }
    }

}
