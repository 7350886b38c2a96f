import Logging
import NIOCore

/// Decodes the XML stream, drives ``StreamNegotiationStateMachine`` and carries out its
/// actions (RFC 6120 §4–§7). It makes no protocol decision of its own.
///
/// Before negotiation completes it answers to `negotiated`; afterwards every first-level
/// element read is passed on as an ``XMLElement`` and every ``XMLElement`` written is
/// serialised in the `jabber:client` namespace.
final class XMPPClientChannelHandler: ChannelDuplexHandler, IdleTrimMember {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = XMLElement
    typealias OutboundIn = XMLElement
    typealias OutboundOut = ByteBuffer

    /// Outbound user event: end the stream with `</stream:stream>` (RFC 6120 §4.4).
    struct CloseStream: Sendable {}

    /// What a finished negotiation yields.
    struct Negotiated: Sendable {
        var jid: JID
        var features: StreamFeatures
        var mechanism: SASLMechanism?
        /// The answer to `<resume/>` (XEP-0198), when one was tried.
        var resumeAnswer: XMLElement?
        /// How the stream logged in.
        var login = LoginOutcome()
    }

    private var machine: StreamNegotiationStateMachine
    private let parser: XMLStreamParser
    private let domain: String
    private let tlsMode: TLSMode
    private let makeTLSHandler: () throws(TLSError) -> TLSHandler
    private let negotiated: EventLoopPromise<Negotiated>
    private let logger: Logger
    private let terminated: EventLoopPromise<XMPPClientError?>
    /// Why the connection ends, once known; nil for a clean close.
    private var closeReason: XMPPClientError?
    private var sentStreamClose = false
    private var negotiationDeadline: Scheduled<Void>?
    private let negotiationTimeout: TimeAmount
    private var events: [XMLStreamEvent] = []
    /// Where a SASL challenge is answered (it may run PBKDF2); nil: on the event loop.
    private let blockingWork: (any BlockingWorkRunner)?
    /// A challenge is being answered off the loop: events wait in `events` (from
    /// `eventIndex` on), in order, until its answer is back.
    private var answering = false
    private var eventIndex = 0
    /// Counts changes to `machine`; an answer computed on a copy is dropped if the machine
    /// changed meanwhile (timeout, close).
    private var machineChanges = 0
    /// The parser failed after the events in `events`: handled once they are.
    private var decodeError: XMLStreamError?
    /// Gives the parser's memory back once nothing is read for a while; nil: never.
    private let trimSweep: IdleTrimSweep?
    /// The sweep's generation at the last read.
    private var lastReadGeneration = 0
    /// Whether this connection waits in the sweep.
    private var inTrimSweep = false
    /// The TLS handler below, once its handshake is done: a trim gives its buffers back too.
    /// Only with a sweep; dropped when the channel goes inactive.
    private var tls: TLSHandler?
    private var isClosed = false

    init(
        machine: StreamNegotiationStateMachine,
        limits: XMLStreamLimits,
        domain: String,
        tlsMode: TLSMode,
        negotiationTimeout: TimeAmount,
        makeTLSHandler: @escaping () throws(TLSError) -> TLSHandler,
        negotiated: EventLoopPromise<Negotiated>,
        terminated: EventLoopPromise<XMPPClientError?>,
        blockingWork: (any BlockingWorkRunner)? = nil,
        trimSweep: IdleTrimSweep? = nil,
        logger: Logger
    ) {
        self.trimSweep = trimSweep
        self.blockingWork = blockingWork
        self.terminated = terminated
        self.machine = machine
        self.parser = XMLStreamParser(limits: limits)
        self.domain = domain
        self.tlsMode = tlsMode
        self.negotiationTimeout = negotiationTimeout
        self.makeTLSHandler = makeTLSHandler
        self.negotiated = negotiated
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.negotiationDeadline = context.eventLoop.scheduleTask(in: self.negotiationTimeout) {
            let (handler, context) = loopBound.value
            handler.run(handler.machine.timedOut(), context: context)
        }
        if context.channel.isActive {
            self.channelBecameActive(context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.channelBecameActive(context: context)
        context.fireChannelActive()
    }

    private func channelBecameActive(context: ChannelHandlerContext) {
        switch self.tlsMode {
        case .directTLS:
            break  // The stream starts once the TLS handshake completes.
        case .startTLS, .plaintextOnLoopback:
            self.run(self.machine.connected(), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isClosed = true
        self.negotiationDeadline?.cancel()
        self.run(self.machine.streamClosed(), context: context)
        self.negotiated.fail(self.closeReason ?? XMPPClientError.closedByServer)
        self.terminated.succeed(self.closeReason)
        // Nothing more is read: the parser's memory goes now, not with the last reference.
        if !self.answering { self.parser.release() }
        self.tls = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        switch event {
        case .handshakeCompleted(let version, let channelBinding):
            self.logger.debug("TLS established", metadata: ["tls.version": "\(version)"])
            if self.trimSweep != nil { self.tls = try? context.pipeline.syncOperations.handler(type: TLSHandler.self) }
            self.run(self.machine.tlsHandshakeCompleted(channelBinding: channelBinding), context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? TLSError {
            self.run(self.machine.tlsFailed(error), context: context)
        } else {
            self.logger.debug("connection error", metadata: ["error": "\(error)"])
            if self.closeReason == nil { self.closeReason = .connectFailed(attempts: ["\(error)"]) }
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = self.unwrapInboundIn(data)
        var decodeError: XMLStreamError?
        do {
            try self.parser.feed(bytes, into: &self.events)
        } catch {
            decodeError = error
        }
        if let decodeError { self.decodeError = decodeError }
        self.processEvents(context: context)
        // An idle connection holds no parser (about 14 KB of libxml2's and the names read,
        // issue 43): the event loop's sweep trims it once nothing is read for a while.
        if let sweep = self.trimSweep {
            self.lastReadGeneration = sweep.generation
            if !self.inTrimSweep, self.parser.isTrimmable {
                self.inTrimSweep = true
                sweep.add(self)
            }
        }
    }

    /// Whether the parser holds libxml2's context now (false once trimmed); for tests.
    var parserHoldsContext: Bool { self.parser.holdsContext }

    func trimForSweep(quietSince: Int) -> Bool {
        let leaves = self.trimIfQuiet(since: quietSince)
        // Out of the sweep: a read joins it again if the parser may be trimmed then (a stream
        // restart makes a new one).
        if leaves { self.inTrimSweep = false }
        return leaves
    }

    /// The sweep's trim; true when this connection leaves the sweep: trimmed, gone, or
    /// never to be trimmed.
    private func trimIfQuiet(since quietSince: Int) -> Bool {
        guard !self.isClosed, self.parser.isTrimmable else { return true }
        guard self.lastReadGeneration < quietSince, !self.answering, self.events.isEmpty, self.parser.trim() else {
            return !self.parser.isTrimmable
        }
        self.events = []
        // Its TLS buffers too, unless bytes are held there (the next read's trim then).
        _ = self.tls?.trimBuffers()
        return true
    }

    /// Handles the events read so far, in order, unless a challenge is being answered off
    /// the loop (they wait for it). Events are handled after the feed returned, so a stream
    /// restart may reset the parser.
    private func processEvents(context: ChannelHandlerContext) {
        while !self.answering, self.eventIndex < self.events.count {
            let event = self.events[self.eventIndex]
            self.eventIndex += 1
            let action: StreamNegotiationStateMachine.Action
            switch event {
            case .streamOpened(let attributes):
                action = self.machine.streamOpened(attributes: attributes)
            case .element(let element):
                let dataFollows = self.eventIndex < self.events.count || self.parser.bytesAfterLastElement > 0 || self.decodeError != nil
                if let blockingWork = self.blockingWork, self.machine.derivesKey(element) {
                    self.answerOffLoop(element, dataFollows: dataFollows, runner: blockingWork, context: context)
                    return
                }
                action = self.machine.elementReceived(element, dataFollows: dataFollows)
            case .streamClosed:
                action = self.machine.streamEndReceived()
            }
            if self.run(action, context: context) {
                self.events.removeAll(keepingCapacity: true)
                self.eventIndex = 0
                return
            }
        }
        guard !self.answering else { return }
        self.events.removeAll(keepingCapacity: true)
        self.eventIndex = 0
        // What could not be parsed comes after everything that could.
        if let error = self.decodeError {
            self.decodeError = nil
            self.logger.warning("invalid XML from server", metadata: ["error": "\(error)"])
            self.run(self.machine.decodingFailed(error), context: context)
        }
    }

    /// A SASL challenge (SCRAM's server-first-message: PBKDF2) answered on a copy of the
    /// machine off the loop; back on the loop the copy replaces the machine, unless the
    /// machine changed meanwhile, and the events read since are handled.
    private func answerOffLoop(_ element: XMLElement, dataFollows: Bool, runner: any BlockingWorkRunner, context: ChannelHandlerContext) {
        self.answering = true
        let copy = self.machine
        let changes = self.machineChanges
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        runner.run(on: context.eventLoop) {
            var machine = copy
            let action = machine.elementReceived(element, dataFollows: dataFollows)
            return (machine, action)
        }.whenComplete { result in
            let (handler, context) = loopBound.value
            handler.answering = false
            guard handler.machineChanges == changes, context.channel.isActive, case .success(let (machine, action)) = result else { return }
            handler.machine = machine
            if handler.run(action, context: context) {
                handler.events.removeAll(keepingCapacity: true)
                handler.eventIndex = 0
                return
            }
            handler.processEvents(context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let element = self.unwrapOutboundIn(data)
        context.write(self.wrapOutboundOut(self.serialize(element, context: context)), promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is CloseStream else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        self.run(self.machine.closeRequested(), context: context)
        promise?.succeed(())
    }

    // MARK: - Actions

    /// Carries out one action; returns whether the current read must stop here (the
    /// stream restarted or ended).
    @discardableResult
    private func run(_ action: StreamNegotiationStateMachine.Action, context: ChannelHandlerContext) -> Bool {
        // Every action comes from a change of the machine (a timeout, a close, TLS events,
        // an element): an answer computed off the loop on an older copy no longer applies.
        self.machineChanges += 1
        switch action {
        case .none:
            return false
        case .sendStreamHeader(let from):
            self.writeStreamHeader(from: from, context: context)
            return false
        case .send(let element):
            self.logger.trace("negotiation send", metadata: ["element": "\(element.name)"])
            context.writeAndFlush(self.wrapOutboundOut(self.serialize(element, context: context)), promise: nil)
            return false
        case .emit(let element):
            context.fireChannelRead(self.wrapInboundOut(element))
            return false
        case .startTLS:
            self.parser.reset()
            do {
                let handler = try self.makeTLSHandler()
                try context.pipeline.syncOperations.addHandler(handler, position: .before(self))
            } catch let error as TLSError {
                self.run(self.machine.tlsFailed(error), context: context)
            } catch {
                self.run(self.machine.tlsFailed(TLSError(.configuration, openSSLErrors: ["\(error)"])), context: context)
            }
            return true
        case .restartStream(let from):
            self.parser.reset()
            self.writeStreamHeader(from: from, context: context)
            return true
        case .ready(let jid, let features):
            self.negotiationDeadline?.cancel()
            for warning in self.machine.warnings {
                self.logger.warning("SASL", metadata: ["warning": "\(warning)"])
            }
            self.negotiated.succeed(
                Negotiated(
                    jid: jid, features: features, mechanism: self.machine.authenticatedWith, resumeAnswer: self.machine.resumeAnswer,
                    login: self.machine.login
                )
            )
            return false
        case .closeWithStreamError(let condition, let error):
            // Report the cause before closing, or channelInactive would report the close instead.
            self.closeReason = error
            self.negotiated.fail(error)
            self.sendStreamError(condition, context: context)
            return true
        case .close(let error):
            self.closeReason = error
            self.negotiated.fail(error)
            self.writeStreamClose(context: context)
            context.close(promise: nil)
            return true
        case .sendStreamClose:
            self.writeStreamClose(context: context)
            return false
        case .finish:
            context.close(promise: nil)
            return true
        case .registered:
            let none = StreamFeatures(XMLElement(name: "features", namespace: XMPPNamespace.stream))
            self.negotiated.succeed(Negotiated(jid: self.machine.configuration.jid.bare, features: none, mechanism: nil))
            self.writeStreamClose(context: context)
            return true
        }
    }

    private func serialize(_ element: XMLElement, context: ChannelHandlerContext) -> ByteBuffer {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        XMLSerializer.write(element, parentNamespace: XMPPNamespace.client, into: &buffer)
        return buffer
    }

    private func writeStreamHeader(from: JID?, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        XMLSerializer.writeStreamHeader(
            to: self.domain, from: from?.description, language: "en", contentNamespace: XMPPNamespace.client, into: &buffer
        )
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
    }

    private func writeStreamClose(context: ChannelHandlerContext) {
        guard context.channel.isActive, !self.sentStreamClose else { return }
        self.sentStreamClose = true
        var buffer = context.channel.allocator.buffer(capacity: 32)
        XMLSerializer.writeStreamClose(into: &buffer)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
    }

    /// Sends `<stream:error>` with `condition`, closes the stream and the connection (RFC 6120 §4.9.1.1).
    private func sendStreamError(_ condition: StreamErrorCondition, context: ChannelHandlerContext) {
        guard context.channel.isActive, !self.sentStreamClose else { return }
        self.sentStreamClose = true
        var buffer = context.channel.allocator.buffer(capacity: 128)
        XMLSerializer.writeStreamError(condition, into: &buffer)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
        context.close(promise: nil)
    }
}
