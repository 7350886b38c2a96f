import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import XMPP

/// The negotiation channel handler on an EmbeddedChannel, against a scripted server.
@Suite("XMPP client channel handler over EmbeddedChannel")
struct XMPPClientChannelHandlerTests {
    static let serverHeader =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.test' id='s1' version='1.0'>"
    static let plainFeatures =
        "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
    static let bindFeatures = "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"

    struct Harness {
        let channel = EmbeddedChannel()
        let negotiated: EventLoopPromise<XMPPClientChannelHandler.Negotiated>
        let terminated: EventLoopPromise<XMPPClientError?>
        let loop: EmbeddedEventLoop
        /// The loop's parser sweep, when the harness was asked for one.
        let sweep: IdleTrimSweep?

        init(
            tlsMode: TLSMode = .plaintextOnLoopback, limits: XMLStreamLimits = XMLStreamLimits(), keyCache: SCRAMKeyCache? = nil,
            blockingWork: (any BlockingWorkRunner)? = nil, trimsParser: Bool = false
        ) throws {
            self.loop = self.channel.embeddedEventLoop
            self.sweep = trimsParser ? IdleTrimSweep(eventLoop: self.loop, period: .seconds(10)) : nil
            self.negotiated = self.loop.makePromise()
            self.terminated = self.loop.makePromise()
            let machine = StreamNegotiationStateMachine(
                configuration: .init(
                    jid: try JID("alice@example.test"), tlsMode: tlsMode, sasl: SASLConfiguration(allowPlainWithoutTLS: true)
                ),
                password: "pw",
                clientNonce: "nonce",
                ids: StanzaIDGenerator(prefix: "t"),
                keyCache: keyCache
            )
            let context = try TLSContext(configuration: TLSConfiguration(useSystemTrustStore: false))
            let handler = XMPPClientChannelHandler(
                machine: machine, limits: limits, domain: "example.test", tlsMode: tlsMode,
                negotiationTimeout: .seconds(30),
                makeTLSHandler: { () throws(TLSError) -> TLSHandler in try TLSHandler(context: context, expectedHost: "example.test") },
                negotiated: self.negotiated, terminated: self.terminated, blockingWork: blockingWork, trimSweep: self.sweep,
                logger: .init(label: "test")
            )
            try self.channel.pipeline.syncOperations.addHandler(handler)
            try self.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5222)).wait()
        }

        /// Everything the client wrote since the last call, as text.
        func written() throws -> String {
            var text = ""
            while var buffer = try self.channel.readOutbound(as: ByteBuffer.self) {
                text += buffer.readString(length: buffer.readableBytes) ?? ""
            }
            return text
        }

        func serverSends(_ text: String) throws {
            try self.channel.writeInbound(ByteBuffer(string: text))
        }

        /// Runs PLAIN negotiation to a bound session.
        func negotiate() throws {
            _ = try self.written()
            try self.serverSends(XMPPClientChannelHandlerTests.serverHeader + XMPPClientChannelHandlerTests.plainFeatures)
            _ = try self.written()
            try self.serverSends("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
            _ = try self.written()
            try self.serverSends(XMPPClientChannelHandlerTests.serverHeader + XMPPClientChannelHandlerTests.bindFeatures)
            _ = try self.written()
            try self.serverSends("<iq type='result' id='t-1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.test/r1</jid></bind></iq>")
        }

        /// Closes the channel (if still open) and says whether nothing was left unread or
        /// unwritten: every test ends with it, so no unexpected output goes unnoticed.
        func finishIsClean() throws -> Bool {
            try self.channel.finish(acceptAlreadyClosed: true).isClean
        }

        func failure() -> XMPPClientError? {
            // EmbeddedEventLoop runs the callback at once if the future has failed.
            let result = NIOLockedValueBox<XMPPClientError?>(nil)
            self.negotiated.futureResult.whenFailure { error in result.withLockedValue { $0 = error as? XMPPClientError } }
            return result.withLockedValue { $0 }
        }
    }

    @Test("negotiates to a bound session, then passes stanzas both ways")
    func happyPath() throws {
        let harness = try Harness()
        let header = try harness.written()
        #expect(header.contains("<stream:stream") && header.contains("to=\"example.test\"") && header.contains("version=\"1.0\""))

        try harness.serverSends(Self.serverHeader + Self.plainFeatures)
        // RFC 4616: authzid empty, authcid alice, password pw.
        #expect(try harness.written() == "<auth xmlns=\"urn:ietf:params:xml:ns:xmpp-sasl\" mechanism=\"PLAIN\">AGFsaWNlAHB3</auth>")
        try harness.serverSends("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        #expect(try harness.written().contains("<stream:stream"))
        try harness.serverSends(Self.serverHeader + Self.bindFeatures)
        #expect(try harness.written() == "<iq type=\"set\" id=\"t-1\"><bind xmlns=\"urn:ietf:params:xml:ns:xmpp-bind\"/></iq>")
        try harness.serverSends("<iq type='result' id='t-1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.test/r1</jid></bind></iq>")
        let negotiated = try harness.negotiated.futureResult.wait()
        #expect(negotiated.jid.description == "alice@example.test/r1")
        #expect(negotiated.mechanism == .plain)

        try harness.serverSends("<message from='bob@example.test/x'><body>hi &amp; bye</body></message>")
        let inbound = try #require(try harness.channel.readInbound(as: XMLElement.self))
        #expect(inbound.firstChild(named: "body")?.text == "hi & bye")

        var body = XMLElement(name: "body", namespace: XMPPNamespace.client)
        body.append(text: "<ok>")
        try harness.channel.writeAndFlush(XMLElement(name: "message", namespace: XMPPNamespace.client, children: [.element(body)])).wait()
        #expect(try harness.written() == "<message><body>&lt;ok&gt;</body></message>")

        try harness.serverSends("</stream:stream>")
        #expect(try harness.written() == "</stream:stream>")
        #expect(!harness.channel.isActive)
        #expect(try harness.finishIsClean())
    }

    @Test("an idle connection's parser is trimmed by its loop's sweep and rebuilt by the next read: a stanza and a stream error read after a trim as before (issue 43)")
    func parserTrimmedWhenIdle() throws {
        let harness = try Harness(trimsParser: true)
        let sweep = try #require(harness.sweep)
        try harness.negotiate()
        _ = try harness.negotiated.futureResult.wait()
        _ = try harness.written()
        let handler = try harness.channel.pipeline.syncOperations.handler(type: XMPPClientChannelHandler.self)
        #expect(handler.parserHoldsContext)
        #expect(sweep.count == 1, "joined at a read")
        harness.loop.advanceTime(by: .seconds(10))
        #expect(handler.parserHoldsContext, "read during the period before the tick: kept")
        harness.loop.advanceTime(by: .seconds(10))
        #expect(!handler.parserHoldsContext, "a whole period without a read: trimmed")
        #expect(sweep.count == 0)

        // A stanza in the stream's default namespace, read by a rebuilt parser.
        try harness.serverSends("<message from='bob@example.test/x'><body>after a trim</body></message>")
        let inbound = try #require(try harness.channel.readInbound(as: XMLElement.self))
        #expect(inbound.namespace == XMPPNamespace.client)
        #expect(inbound.firstChild(named: "body")?.text == "after a trim")
        #expect(handler.parserHoldsContext)
        #expect(sweep.count == 1, "joined again at the read")
        harness.loop.advanceTime(by: .seconds(20))
        #expect(!handler.parserHoldsContext)

        // The stream's prefix is declared to the rebuilt parser: a stream error is one.
        try harness.serverSends("<message from='bob@example.test/x'><body>again</body></message>")
        #expect(try harness.channel.readInbound(as: XMLElement.self)?.firstChild(named: "body")?.text == "again")
        #expect(sweep.count == 1)
        try harness.serverSends("<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        #expect(try harness.terminated.futureResult.wait() == .streamError(condition: .conflict, text: nil))
        #expect(try harness.written() == "</stream:stream>")
        #expect(!harness.channel.isActive)
        #expect(!handler.parserHoldsContext, "a closed connection's parser is released at once")
        #expect(sweep.count == 1, "still a member until the next tick")
        harness.loop.advanceTime(by: .seconds(10))
        #expect(sweep.count == 0, "a closed connection leaves at the next tick, read or not")
        #expect(try harness.finishIsClean())
    }

    @Test("restricted XML from the server: restricted-xml stream error, then close")
    func restrictedXMLFromServer() throws {
        let harness = try Harness()
        _ = try harness.written()
        try harness.serverSends(Self.serverHeader + "<!-- hello -->")
        let written = try harness.written()
        #expect(written.contains("<stream:error><restricted-xml xmlns=\"urn:ietf:params:xml:ns:xmpp-streams\"/></stream:error></stream:stream>"))
        #expect(!harness.channel.isActive)
        guard case .invalidServerXML(let error) = harness.failure() else {
            Issue.record("expected invalidServerXML")
            return
        }
        #expect(error.condition == .restrictedXML)
        #expect(try harness.finishIsClean())
    }

    @Test("an oversize stanza after negotiation: policy-violation, then close")
    func oversizeAfterReady() throws {
        let harness = try Harness(limits: XMLStreamLimits(maxStanzaBytes: 2048))
        try harness.negotiate()
        _ = try harness.negotiated.futureResult.wait()
        _ = try harness.written()
        try harness.serverSends("<message><body>" + String(repeating: "x", count: 5000) + "</body></message>")
        #expect(try harness.written().contains("<policy-violation"))
        #expect(!harness.channel.isActive)
        #expect(try harness.channel.readInbound(as: XMLElement.self) == nil)
        #expect(try harness.finishIsClean())
    }

    @Test("plaintext after <proceed/> is fatal and TLS is never started", arguments: [
        "<stream:features/>", "<message>", "<a><b>", "<mess",
    ])
    func plaintextAfterProceed(_ trailing: String) throws {
        let harness = try Harness(tlsMode: .startTLS)
        _ = try harness.written()
        try harness.serverSends(Self.serverHeader + "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/></stream:features>")
        #expect(try harness.written() == "<starttls xmlns=\"urn:ietf:params:xml:ns:xmpp-tls\"/>")
        try harness.serverSends("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>" + trailing)
        guard case .tls(let error) = harness.failure() else {
            Issue.record("expected a TLS error")
            return
        }
        #expect(error.kind == .unencryptedDataAfterProceed)
        #expect(!harness.channel.isActive)
        #expect((try? harness.channel.pipeline.syncOperations.handler(type: TLSHandler.self)) == nil)
        // The client closes its side of the stream after the fatal error (RFC 6120 §4.9.1).
        #expect(try harness.written() == "</stream:stream>")
        #expect(try harness.finishIsClean())
    }

    @Test("after negotiation, why the connection ended is reported as a typed error")
    func closeReasonAfterReady() throws {
        let harness = try Harness()
        try harness.negotiate()
        _ = try harness.negotiated.futureResult.wait()
        try harness.serverSends("<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        #expect(!harness.channel.isActive)
        #expect(try harness.terminated.futureResult.wait() == .streamError(condition: .conflict, text: nil))
        // The client closes its side of the stream after the fatal error (RFC 6120 §4.9.1).
        #expect(try harness.written() == "</stream:stream>")
        #expect(try harness.finishIsClean())
    }

    @Test("a clean close we start ends with no error")
    func cleanClose() throws {
        let harness = try Harness()
        try harness.negotiate()
        _ = try harness.negotiated.futureResult.wait()
        _ = try harness.written()
        try harness.channel.pipeline.triggerUserOutboundEvent(XMPPClientChannelHandler.CloseStream()).wait()
        #expect(try harness.written() == "</stream:stream>")
        try harness.serverSends("</stream:stream>")
        #expect(!harness.channel.isActive)
        #expect(try harness.terminated.futureResult.wait() == nil)
        #expect(try harness.finishIsClean())
    }

    @Test("a stream error from the server surfaces as a typed error")
    func serverStreamError() throws {
        let harness = try Harness()
        _ = try harness.written()
        try harness.serverSends(
            Self.serverHeader
                + "<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/><text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>no such host</text></stream:error>"
        )
        #expect(harness.failure() == .streamError(condition: .hostUnknown, text: "no such host"))
        #expect(!harness.channel.isActive)
        // The client closes its side of the stream after the fatal error (RFC 6120 §4.9.1).
        #expect(try harness.written() == "</stream:stream>")
        #expect(try harness.finishIsClean())
    }

    @Test("negotiation that stalls hits the deadline: connection-timeout")
    func negotiationTimeout() throws {
        let harness = try Harness()
        _ = try harness.written()
        try harness.serverSends(Self.serverHeader)
        harness.loop.advanceTime(by: .seconds(31))
        #expect(harness.failure() == .timedOut("stream negotiation"))
        #expect(try harness.written().contains("<connection-timeout"))
        #expect(!harness.channel.isActive)
        #expect(try harness.finishIsClean())
    }

    @Test("the server closing the connection early fails negotiation")
    func earlyClose() throws {
        let harness = try Harness()
        _ = try harness.written()
        try harness.channel.close().wait()
        #expect(harness.failure() == .closedByServer)
        #expect(try harness.finishIsClean())
    }

    /// Holds work instead of running it, so a test sees it did not run on the loop and
    /// decides when it runs.
    final class HeldWork: BlockingWorkRunner, @unchecked Sendable {
        private let held = NIOLockedValueBox<[@Sendable () -> Void]>([])

        func run<Value: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () -> Value) -> EventLoopFuture<Value> {
            let promise = eventLoop.makePromise(of: Value.self)
            self.held.withLockedValue { $0.append { promise.succeed(work()) } }
            return promise.futureResult
        }

        var count: Int { self.held.withLockedValue { $0.count } }

        func release() {
            for work in self.held.withLockedValue({ held in defer { held.removeAll() }; return held }) { work() }
        }
    }

    static let scramFeatures =
        "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>"
    /// RFC 5802 §5's server-first-message for client nonce "nonce".
    static let serverFirst = "r=nonce3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"

    @Test("a SCRAM challenge is answered off the event loop (PBKDF2 there); reads wait for the answer, in order")
    func challengeOffTheLoop() throws {
        let keys = SCRAMKeyCache()
        let work = HeldWork()
        let harness = try Harness(keyCache: keys, blockingWork: work)
        _ = try harness.written()
        try harness.serverSends(Self.serverHeader + Self.scramFeatures)
        #expect(try harness.written().hasPrefix("<auth xmlns=\"urn:ietf:params:xml:ns:xmpp-sasl\" mechanism=\"SCRAM-SHA-1\">"))
        // The challenge, and in the same read a stray element that must wait its turn.
        let challenge = SASLBase64.encode(Array(Self.serverFirst.utf8))
        try harness.serverSends("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(challenge)</challenge><failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>")
        #expect(work.count == 1)
        #expect(keys.derivationCount == 0, "PBKDF2 ran on the event loop")
        #expect(try harness.written().isEmpty)
        #expect(harness.failure() == nil)
        work.release()
        harness.loop.run()
        #expect(keys.derivationCount == 1)
        let response = try harness.written()
        #expect(response.hasPrefix("<response xmlns=\"urn:ietf:params:xml:ns:xmpp-sasl\">"), "\(response)")
        // The failure read with the challenge is handled after the answer: authentication failed.
        guard case .authenticationFailed = harness.failure() else {
            Issue.record("the failure after the challenge was not handled: \(String(describing: harness.failure()))")
            return
        }
        _ = try harness.written()
        #expect(try harness.finishIsClean())
    }

    @Test("a connection that closes while the challenge is answered off the loop drops the late answer")
    func challengeAnswerAfterClose() throws {
        let work = HeldWork()
        let harness = try Harness(keyCache: SCRAMKeyCache(), blockingWork: work)
        _ = try harness.written()
        try harness.serverSends(Self.serverHeader + Self.scramFeatures)
        _ = try harness.written()
        try harness.serverSends("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLBase64.encode(Array(Self.serverFirst.utf8)))</challenge>")
        #expect(work.count == 1)
        try harness.channel.close().wait()
        work.release()
        harness.loop.run()
        #expect(try harness.written().isEmpty, "an answer was written after the close")
        #expect(harness.failure() != nil)
        #expect(try harness.finishIsClean())
    }
}
