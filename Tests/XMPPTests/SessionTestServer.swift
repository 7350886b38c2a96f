import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import XMPP

/// The server's side of the connections an ``XMPPSession`` under test opens: each connect
/// gives the session an ``XMPPConnection`` over a `NIOAsyncTestingChannel` (no socket, no
/// TLS, no negotiation: the stream starts bound) and the test a ``Link`` to play the server
/// on. The routine of a stream is answered by the link itself (stream management
/// `<enable/>`, `<r/>` and `<resume/>`, IQs nobody scripted); everything else is handed to the
/// test, in order, to answer as the scenario needs.
final class SessionTestServer: XMPPConnector {
    let jid: JID
    private let links: AsyncQueue<Link>
    private let newLink: AsyncStream<Link>.Continuation
    /// What the next connects answer a resumption with (`<resumed/>` or `<failed/>`), first
    /// first; none left: `<failed/>` (the server forgot the session).
    private let resumeAnswers = NIOLockedValueBox<[String]>([])
    private let connects = NIOLockedValueBox(0)
    private let uptimeSeconds = NIOLockedValueBox(86_400)
    private let softwareName = NIOLockedValueBox<String?>(nil)
    private let softwareQuestions = NIOLockedValueBox(0)

    /// What the server answers when asked its uptime (XEP-0012), in seconds.
    var uptime: Int {
        get { self.uptimeSeconds.withLockedValue { $0 } }
        set { self.uptimeSeconds.withLockedValue { $0 = newValue } }
    }

    /// The name the server gives when asked its software version (XEP-0092); nil: it does
    /// not say (`service-unavailable`), as a server without `mod_version`.
    var software: String? {
        get { self.softwareName.withLockedValue { $0 } }
        set { self.softwareName.withLockedValue { $0 = newValue } }
    }

    /// How often the session asked the server's software version (XEP-0092).
    var softwareAsked: Int { self.softwareQuestions.withLockedValue { $0 } }

    init(jid: JID) {
        self.jid = jid
        let (links, newLink) = AsyncStream.makeStream(of: Link.self)
        (self.links, self.newLink) = (AsyncQueue(links), newLink)
    }

    /// The next connection the session opens.
    /// How many connections the session opened.
    var connectionCount: Int { self.connects.withLockedValue { $0 } }

    func nextLink() async throws -> Link {
        try #require(await self.links.next(), "the session opened no connection")
    }

    /// The answers the next resumptions get, in order (XML of `<resumed/>` or `<failed/>`).
    func answerResumptions(_ answers: [String]) {
        self.resumeAnswers.withLockedValue { $0 += answers }
    }

    func connect(
        configuration: XMPPClientConfiguration, password: String, resume: StreamNegotiationStateMachine.ResumeRequest?
    ) async throws(XMPPClientError) -> XMPPConnection {
        let number = self.connects.withLockedValue { count in
            count += 1
            return count
        }
        var answer: XMLElement?
        if let resume {
            let xml = self.resumeAnswers.withLockedValue { $0.isEmpty ? "<failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>" : $0.removeFirst() }
            answer = try? Self.element(xml.replacingOccurrences(of: "PREVID", with: resume.previousID))
        }
        let channel = NIOAsyncTestingChannel()
        let terminated = Termination(channel.eventLoop.makePromise(of: XMPPClientError?.self))
        // The session dropping the connection (abort) ends it as a lost one.
        channel.closeFuture.whenComplete { _ in terminated.end(.closedByServer) }
        let handler = ElementStreamHandler(for: channel)
        let stall = WriteStall()
        do {
            try await channel.pipeline.addHandler(StreamCloser(terminated: terminated))
            try await channel.pipeline.addHandler(handler)
            try await channel.pipeline.addHandler(stall)
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222))
        } catch {
            throw .connectFailed(attempts: ["\(error)"])
        }
        let features = (try? Self.element("<stream:features xmlns:stream='http://etherx.jabber.org/streams'><sm xmlns='urn:xmpp:sm:3'/></stream:features>"))
            .map(StreamFeatures.init) ?? StreamFeatures(XMLElement(name: "features", namespace: "http://etherx.jabber.org/streams"))
        let jid = (try? self.jid.withResource("bridge")) ?? self.jid
        // A resumed stream goes on counting from the `h` the server said.
        let resumedAt = answer?.name == "resumed" ? answer?[attribute: "h"].flatMap(UInt32.init) : nil
        let link = Link(channel: channel, terminated: terminated, stall: stall, number: number, countingFrom: resumedAt, uptime: self.uptimeSeconds, software: self.softwareName, softwareAsked: self.softwareQuestions)
        self.newLink.yield(link)
        return XMPPConnection(
            jid: jid, features: features, mechanism: nil, inbox: handler.inbox,
            target: ConnectionTarget(host: "127.0.0.1", port: 5222, tlsMode: .startTLS), channel: channel, terminated: terminated.promise.futureResult,
            resumeAnswer: answer
        )
    }

    /// One top-level element as a server in a `jabber:client` stream would write it.
    static func element(_ xml: String) throws -> XMLElement {
        let result = parseStream(testStreamHeader + xml)
        if let error = result.error { throw error }
        return try #require(result.events.compactMap(\.element).last)
    }

    /// How a connection ended, said once (``XMPPConnection/closed()``): nil for a closed
    /// stream, else why it was lost.
    final class Termination: Sendable {
        let promise: EventLoopPromise<XMPPClientError?>
        private let ended = NIOLockedValueBox(false)

        init(_ promise: EventLoopPromise<XMPPClientError?>) {
            self.promise = promise
        }

        func end(_ reason: XMPPClientError?) {
            guard self.ended.withLockedValue({ ended in defer { ended = true }; return !ended }) else { return }
            self.promise.succeed(reason)
        }
    }

    /// Our close of the stream (``XMPPConnection/close(timeout:)``) answered as a server
    /// does: it closes too.
    private final class StreamCloser: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = XMLElement
        let terminated: Termination

        init(terminated: Termination) {
            self.terminated = terminated
        }

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard event is XMPPClientChannelHandler.CloseStream else { return context.triggerUserOutboundEvent(event, promise: promise) }
            promise?.succeed()
            self.terminated.end(nil)
            context.close(promise: nil)
        }
    }

    /// Holds what the session writes while stalled, as a server that stopped reading leaves
    /// it in a full TCP window: the writes neither reach the server nor complete, until the
    /// connection closes and fails them.
    final class WriteStall: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = XMLElement
        typealias OutboundOut = XMLElement
        private let state = NIOLockedValueBox((stalled: false, held: [EventLoopPromise<Void>?]()))

        /// From now on, writes wait.
        func stall() {
            self.state.withLockedValue { $0.stalled = true }
        }

        /// How many writes wait.
        var heldCount: Int { self.state.withLockedValue { $0.held.count } }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let held = self.state.withLockedValue { state -> Bool in
                if state.stalled { state.held.append(promise) }
                return state.stalled
            }
            if !held { context.write(data, promise: promise) }
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            let held = self.state.withLockedValue { state in
                defer { state.held = [] }
                return state.held
            }
            for waiting in held { waiting?.fail(ChannelError.ioOnClosedChannel) }
            context.close(mode: mode, promise: promise)
        }
    }

    /// One connection, seen from the server. A task of its own reads what the session writes,
    /// as a server reads a stream: it counts stanzas (`h`), answers `<enable/>` and the IQs
    /// nobody scripts (``routineAnswer(_:)``), and queues the rest for the test.
    final class Link: Sendable {
        let channel: NIOAsyncTestingChannel
        let terminated: Termination
        /// Holds the session's writes once the server stops reading (``stopReading()``).
        let stall: WriteStall
        /// Which connect of the session this is (1 for the first).
        let number: Int
        /// Stanzas the client sent since it enabled (or resumed) stream management (`h`),
        /// and `h` as it was at the last element the test took.
        private let state: NIOLockedValueBox<(counting: Bool, received: UInt32, atLastTaken: UInt32)>
        private let written: AsyncQueue<(element: XMLElement, received: UInt32)>
        private let reading: NIOLockedValueBox<Task<Void, Never>?> = NIOLockedValueBox(nil)

        /// `countingFrom`: the stream resumed a session whose count was this.
        init(channel: NIOAsyncTestingChannel, terminated: Termination, stall: WriteStall, number: Int, countingFrom: UInt32?, uptime: NIOLockedValueBox<Int>, software: NIOLockedValueBox<String?>, softwareAsked: NIOLockedValueBox<Int>) {
            self.channel = channel
            self.terminated = terminated
            self.stall = stall
            self.number = number
            self.state = NIOLockedValueBox((counting: countingFrom != nil, received: countingFrom ?? 0, atLastTaken: countingFrom ?? 0))
            let (stream, queue) = AsyncStream.makeStream(of: (element: XMLElement, received: UInt32).self)
            self.written = AsyncQueue(stream)
            let task = Task { [state] in
                while !Task.isCancelled, let element = try? await channel.waitForOutboundWrite(as: XMLElement.self) {
                    if element.namespace == StreamManagementStateMachine.namespace, element.name == "enable" {
                        state.withLockedValue { $0.counting = true }
                        try? await channel.writeInbound(SessionTestServer.element("<enabled xmlns='urn:xmpp:sm:3' id='sm-\(number)' resume='true' max='600'/>"))
                        continue
                    }
                    let received = state.withLockedValue { count -> UInt32 in
                        if count.counting, ["message", "presence", "iq"].contains(element.name) { count.received &+= 1 }
                        return count.received
                    }
                    if element.elements.first?.namespace == "jabber:iq:version" { softwareAsked.withLockedValue { $0 += 1 } }
                    if let answer = Link.routineAnswer(element, uptime: uptime.withLockedValue { $0 }, software: software.withLockedValue { $0 }) {
                        try? await channel.writeInbound(SessionTestServer.element(answer))
                        continue
                    }
                    queue.yield((element, received))
                }
                queue.finish()
            }
            self.reading.withLockedValue { $0 = task }
        }

        /// `h`: the stanzas counted up to the last element the test took.
        var received: UInt32 { self.state.withLockedValue { $0.atLastTaken } }

        /// The next element the session wrote that is not routine, in order; a `<r/>` on the
        /// way is answered with the count at its place, unless `streamManagement`, which
        /// returns it.
        func next(streamManagement: Bool = false) async throws -> XMLElement {
            while let (element, received) = await self.written.next() {
                self.state.withLockedValue { $0.atLastTaken = received }
                if element.namespace == StreamManagementStateMachine.namespace, !streamManagement {
                    if element.name == "r" { try await self.send("<a xmlns='urn:xmpp:sm:3' h='\(received)'/>") }
                    continue
                }
                return element
            }
            throw ChannelError.ioOnClosedChannel
        }

        /// The next non-routine element, which must match `predicate`.
        func expect(_ what: String, streamManagement: Bool = false, _ predicate: (XMLElement) -> Bool) async throws -> XMLElement {
            let element = try await self.next(streamManagement: streamManagement)
            try #require(predicate(element), "expected \(what), the session wrote \(element)")
            return element
        }

        /// Writes `xml` (one top-level element) to the session.
        func send(_ xml: String) async throws {
            try await self.channel.writeInbound(SessionTestServer.element(xml))
        }

        /// The server stops reading: what the session writes from now on waits, unread.
        func stopReading() {
            self.stall.stall()
        }

        /// The server loses the connection (no stream close: resumable).
        func drop() async {
            self.terminated.end(.closedByServer)
            try? await self.channel.close()
            self.reading.withLockedValue { $0?.cancel() }
        }

        /// The answer to an IQ nobody scripted: an empty result to disco#info and pings; the
        /// server's `uptime` (XEP-0012) and `software` name (XEP-0092) when it has one;
        /// `service-unavailable` (RFC 6120 §8.4) to any other query of the server itself.
        static func routineAnswer(_ element: XMLElement, uptime: Int, software: String?) -> String? {
            guard element.name == "iq", let id = element[attribute: "id"], let query = element.elements.first else { return nil }
            let from = element[attribute: "to"].map { " from='\($0)'" } ?? ""
            if query.namespace == "http://jabber.org/protocol/disco#info" || query.namespace == "urn:xmpp:ping" {
                return "<iq type='result' id='\(id)'\(from)/>"
            }
            guard element[attribute: "type"] == "get", element[attribute: "to"] == SessionScene.account.domainpart else { return nil }
            if query.namespace == "jabber:iq:last" {
                return "<iq type='result' id='\(id)'\(from)><query xmlns='jabber:iq:last' seconds='\(uptime)'/></iq>"
            }
            if query.namespace == "jabber:iq:version", let software {
                return "<iq type='result' id='\(id)'\(from)><query xmlns='jabber:iq:version'><name>\(software)</name><version>1</version></query></iq>"
            }
            return "<iq type='error' id='\(id)'\(from)><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        }
    }
}
