import Logging
import NIOCore

/// Decodes the XML stream, drives ``StreamNegotiationStateMachine`` and carries out its
/// actions (RFC 6120 §4–§7). It makes no protocol decision of its own.
///
/// Before negotiation completes it answers to `negotiated`; afterwards every first-level
/// element read is passed on as an ``XMLElement`` and every ``XMLElement`` written is
/// serialised in the `jabber:client` namespace.
final class XMPPClientChannelHandler: ChannelDuplexHandler {
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
    }

    private var machine: StreamNegotiationStateMachine
    private let parser: XMLStreamParser
    private let domain: String
    private let tlsMode: TLSMode
    private let makeTLSHandler: () throws(TLSError) -> TLSHandler
    private let negotiated: EventLoopPromise<Negotiated>
    private let logger: Logger
    private var isReady = false
    private var sentStreamClose = false
    private var negotiationDeadline: Scheduled<Void>?
    private let negotiationTimeout: TimeAmount
    private var events: [XMLStreamEvent] = []
    private var outbound = ByteBuffer()

    init(
        machine: StreamNegotiationStateMachine,
        limits: XMLStreamLimits,
        domain: String,
        tlsMode: TLSMode,
        negotiationTimeout: TimeAmount,
        makeTLSHandler: @escaping () throws(TLSError) -> TLSHandler,
        negotiated: EventLoopPromise<Negotiated>,
        logger: Logger
    ) {
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
        self.outbound = context.channel.allocator.buffer(capacity: 4096)
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
        self.negotiationDeadline?.cancel()
        self.run(self.machine.streamClosed(), context: context)
        self.negotiated.fail(XMPPClientError.closedByServer)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        switch event {
        case .handshakeCompleted(let version, let channelBinding):
            self.logger.debug("TLS established", metadata: ["tls.version": "\(version)"])
            if case .initial = self.machine.state {
                self.run(self.machine.connected(channelBinding: channelBinding), context: context)
            } else {
                self.run(self.machine.tlsEstablished(channelBinding: channelBinding), context: context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? TLSError {
            self.run(self.machine.tlsFailed(error), context: context)
        } else {
            self.logger.debug("connection error", metadata: ["error": "\(error)"])
            self.negotiated.fail(XMPPClientError.connectFailed(attempts: ["\(error)"]))
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
        // Events are handled after the feed returned, so a stream restart may reset the parser.
        var index = 0
        while index < self.events.count {
            let event = self.events[index]
            index += 1
            let action: StreamNegotiationStateMachine.Action
            switch event {
            case .streamOpened(let attributes):
                guard !self.isReady else { continue }
                action = self.machine.streamOpened(attributes: attributes)
            case .element(let element):
                if self.isReady {
                    if element.name == "error", element.namespace == XMPPNamespace.stream {
                        self.logger.warning("stream error", metadata: ["error": "\(StreamNegotiationStateMachine.streamError(from: element))"])
                        context.close(promise: nil)
                        return
                    }
                    context.fireChannelRead(self.wrapInboundOut(element))
                    continue
                }
                action = self.machine.elementReceived(element)
            case .streamClosed:
                if self.isReady {
                    self.writeStreamClose(context: context)
                    context.close(promise: nil)
                    return
                }
                action = self.machine.streamClosed()
            }
            let restarted = self.run(action, context: context, remainingEvents: self.events.count - index)
            if restarted {
                self.events.removeAll(keepingCapacity: true)
                return
            }
        }
        self.events.removeAll(keepingCapacity: true)
        if let decodeError {
            self.logger.warning("invalid XML from server", metadata: ["error": "\(decodeError)"])
            if self.isReady {
                self.sendStreamError(decodeError.condition, context: context)
            } else {
                self.run(self.machine.decodingFailed(decodeError), context: context)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let element = self.unwrapOutboundIn(data)
        self.outbound.clear()
        XMLSerializer.write(element, parentNamespace: XMPPNamespace.client, into: &self.outbound)
        context.write(self.wrapOutboundOut(self.outbound), promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is CloseStream else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        self.writeStreamClose(context: context)
        promise?.succeed(())
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        self.negotiated.fail(XMPPClientError.closedByServer)
        context.close(mode: mode, promise: promise)
    }

    // MARK: - Actions

    @discardableResult
    private func run(
        _ action: StreamNegotiationStateMachine.Action,
        context: ChannelHandlerContext,
        remainingEvents: Int = 0
    ) -> Bool {
        switch action {
        case .none:
            return false
        case .sendStreamHeader:
            self.writeStreamHeader(context: context)
            return false
        case .send(let element):
            self.logger.trace("negotiation send", metadata: ["element": "\(element.name)"])
            context.writeAndFlush(self.wrapOutboundOut(self.serialize(element, context: context)), promise: nil)
            return false
        case .startTLS:
            // RFC 6120 §5.4.3.3: nothing may follow <proceed/> in plaintext.
            guard remainingEvents == 0, self.parser.unconsumedByteCount == 0 else {
                self.run(self.machine.tlsFailed(TLSError(.unencryptedDataAfterProceed)), context: context)
                return true
            }
            do {
                let handler = try self.makeTLSHandler()
                try context.pipeline.syncOperations.addHandler(handler, position: .before(self))
            } catch let error as TLSError {
                self.run(self.machine.tlsFailed(error), context: context)
            } catch {
                self.run(self.machine.tlsFailed(TLSError(.configuration, openSSLErrors: ["\(error)"])), context: context)
            }
            self.parser.reset()
            return true
        case .restartStream:
            if remainingEvents > 0 {
                self.logger.warning("server sent data before the stream restart; closing")
                self.run(self.machine.decodingFailed(XMLStreamError(.badFormat, "data after stream restart point")), context: context)
                return true
            }
            self.parser.reset()
            self.writeStreamHeader(context: context)
            return true
        case .ready(let jid, let features):
            self.isReady = true
            self.negotiationDeadline?.cancel()
            for warning in self.machine.warnings {
                self.logger.warning("SASL", metadata: ["warning": "\(warning)"])
            }
            self.negotiated.succeed(Negotiated(jid: jid, features: features, mechanism: self.machine.authenticatedWith))
            return false
        case .closeWithStreamError(let condition, let error):
            // Report the cause before closing, or channelInactive would report the close instead.
            self.negotiated.fail(error)
            self.sendStreamError(condition, context: context)
            return true
        case .close(let error):
            self.negotiated.fail(error)
            self.writeStreamClose(context: context)
            context.close(promise: nil)
            return true
        }
    }

    private func serialize(_ element: XMLElement, context: ChannelHandlerContext) -> ByteBuffer {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        XMLSerializer.write(element, parentNamespace: XMPPNamespace.client, into: &buffer)
        return buffer
    }

    private func writeStreamHeader(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        XMLSerializer.writeStreamHeader(
            to: self.domain, from: nil, language: "en", contentNamespace: XMPPNamespace.client, into: &buffer
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
        let error = XMLElement(
            name: "error", namespace: XMPPNamespace.stream,
            children: [.element(XMLElement(name: condition.rawValue, namespace: XMPPNamespace.streamErrors))]
        )
        var buffer = context.channel.allocator.buffer(capacity: 128)
        // Written with the stream prefix, which the header declared.
        buffer.writeString("<stream:error>")
        for child in error.elements {
            XMLSerializer.write(child, parentNamespace: XMPPNamespace.client, into: &buffer)
        }
        buffer.writeString("</stream:error>")
        XMLSerializer.writeStreamClose(into: &buffer)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
        context.close(promise: nil)
    }
}
