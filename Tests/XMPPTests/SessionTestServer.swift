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
    private let links: LinkQueue
    private let newLink: AsyncStream<Link>.Continuation
    /// What the next connects answer a resumption with (`<resumed/>` or `<failed/>`), first
    /// first; none left: `<failed/>` (the server forgot the session).
    private let resumeAnswers = NIOLockedValueBox<[String]>([])
    private let connects = NIOLockedValueBox(0)

    init(jid: JID) {
        self.jid = jid
        let (links, newLink) = AsyncStream.makeStream(of: Link.self)
        (self.links, self.newLink) = (LinkQueue(links), newLink)
    }

    /// The next connection the session opens.
    func nextLink() async throws -> Link {
        try #require(await self.links.next(), "the session opened no connection")
    }

    /// The session's connections as they come (one reader: the test).
    private actor LinkQueue {
        var iterator: AsyncStream<Link>.AsyncIterator

        init(_ links: AsyncStream<Link>) {
            self.iterator = links.makeAsyncIterator()
        }

        func next() async -> Link? {
            var iterator = self.iterator
            defer { self.iterator = iterator }
            return await iterator.next(isolation: self)
        }
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
        let terminated = channel.eventLoop.makePromise(of: XMPPClientError?.self)
        let (producer, handler) = ElementStreamHandler.make(for: channel)
        do {
            try await channel.pipeline.addHandler(StreamCloser(terminated: terminated))
            try await channel.pipeline.addHandler(handler)
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222))
        } catch {
            throw .connectFailed(attempts: ["\(error)"])
        }
        let features = (try? Self.element("<stream:features xmlns:stream='http://etherx.jabber.org/streams'><sm xmlns='urn:xmpp:sm:3'/></stream:features>"))
            .map(StreamFeatures.init) ?? StreamFeatures(XMLElement(name: "features", namespace: "http://etherx.jabber.org/streams"))
        let jid = (try? self.jid.withResource("bridge")) ?? self.jid
        let link = Link(channel: channel, terminated: terminated, number: number, resumedFrom: answer?.name == "resumed" ? resume?.handled : nil)
        self.newLink.yield(link)
        return XMPPConnection(
            jid: jid, features: features, mechanism: nil, elements: XMPPElementSequence(producer: producer),
            target: ConnectionTarget(host: "127.0.0.1", port: 5222, tlsMode: .startTLS), channel: channel, terminated: terminated.futureResult,
            resumeAnswer: answer
        )
    }

    /// One top-level element as a server in a `jabber:client` stream would write it.
    static func element(_ xml: String) throws -> XMLElement {
        let result = parseStream(testStreamHeader + xml)
        if let error = result.error { throw error }
        return try #require(result.events.compactMap(\.element).last)
    }

    /// Our close of the stream (``XMPPConnection/close(timeout:)``) answered as a server
    /// does: it closes too.
    private final class StreamCloser: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = XMLElement
        let terminated: EventLoopPromise<XMPPClientError?>

        init(terminated: EventLoopPromise<XMPPClientError?>) {
            self.terminated = terminated
        }

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard event is XMPPClientChannelHandler.CloseStream else { return context.triggerUserOutboundEvent(event, promise: promise) }
            promise?.succeed()
            self.terminated.succeed(nil)
            context.close(promise: nil)
        }
    }

    /// One connection, seen from the server.
    final class Link: Sendable {
        let channel: NIOAsyncTestingChannel
        let terminated: EventLoopPromise<XMPPClientError?>
        /// Which connect of the session this is (1 for the first).
        let number: Int
        /// The client's count of our stanzas it handled, when this stream resumed one.
        let resumedFrom: UInt32?
        /// Stanzas the client sent since it enabled (or resumed) stream management: `h`.
        private let state = NIOLockedValueBox((counting: false, received: UInt32(0), acknowledges: true))

        init(channel: NIOAsyncTestingChannel, terminated: EventLoopPromise<XMPPClientError?>, number: Int, resumedFrom: UInt32?) {
            self.channel = channel
            self.terminated = terminated
            self.number = number
            self.resumedFrom = resumedFrom
        }

        /// Whether `<r/>` is answered (false: the server takes stanzas without saying so).
        func acknowledges(_ on: Bool) {
            self.state.withLockedValue { $0.acknowledges = on }
        }

        /// The stanzas counted so far (`h`).
        var received: UInt32 { self.state.withLockedValue { $0.received } }

        /// The next element the session wrote that is not routine (answered here: stream
        /// management, unless `streamManagement`, and IQs of `routine`: disco#info, pings), in
        /// order.
        func next(streamManagement: Bool = false, routine: (XMLElement) -> String? = Link.routineAnswer) async throws -> XMLElement {
            while true {
                let element = try await self.channel.waitForOutboundWrite(as: XMLElement.self)
                if element.namespace == StreamManagementStateMachine.namespace {
                    if streamManagement, element.name != "enable" { return element }
                    try await self.streamManagement(element)
                    continue
                }
                if ["message", "presence", "iq"].contains(element.name) {
                    self.state.withLockedValue { if $0.counting { $0.received &+= 1 } }
                }
                if let answer = routine(element) {
                    try await self.send(answer)
                    continue
                }
                return element
            }
        }

        /// The next non-routine element, which must match `predicate`.
        func expect(_ what: String, streamManagement: Bool = false, _ predicate: (XMLElement) -> Bool) async throws -> XMLElement {
            let element = try await self.next(streamManagement: streamManagement)
            #expect(predicate(element), "expected \(what), the session wrote \(element)")
            return element
        }

        /// Writes `xml` (one top-level element) to the session.
        func send(_ xml: String) async throws {
            try await self.channel.writeInbound(SessionTestServer.element(xml))
        }

        /// The server loses the connection (no stream close: resumable).
        func drop() async {
            self.terminated.succeed(XMPPClientError.closedByServer)
            try? await self.channel.close()
        }

        private func streamManagement(_ element: XMLElement) async throws {
            switch element.name {
            case "enable":
                self.state.withLockedValue { $0.counting = true }
                try await self.send("<enabled xmlns='urn:xmpp:sm:3' id='sm-\(self.number)' resume='true' max='600'/>")
            case "r":
                let (acknowledges, h) = self.state.withLockedValue { ($0.acknowledges, $0.received) }
                if acknowledges { try await self.send("<a xmlns='urn:xmpp:sm:3' h='\(h)'/>") }
            default:
                break
            }
        }

        /// The answer to an IQ nobody scripted: an empty result to disco#info and pings.
        static func routineAnswer(_ element: XMLElement) -> String? {
            guard element.name == "iq", let id = element[attribute: "id"], let query = element.elements.first,
                query.namespace == "http://jabber.org/protocol/disco#info" || query.namespace == "urn:xmpp:ping"
            else { return nil }
            let from = element[attribute: "to"].map { " from='\($0)'" } ?? ""
            return "<iq type='result' id='\(id)'\(from)/>"
        }
    }
}
