import Logging
import NIOCore

/// Decodes a component's XML stream, drives ``ComponentNegotiationStateMachine`` and
/// carries out its actions (XEP-0114 §3). It makes no protocol decision of its own.
///
/// Elements in `jabber:component:accept` are read as `jabber:client`, and stanzas written
/// in `jabber:client` go out in the stream's namespace: the stanza types of this library
/// serve both kinds of stream.
final class ComponentChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = XMLElement
    typealias OutboundIn = XMLElement
    typealias OutboundOut = ByteBuffer

    private var machine: ComponentNegotiationStateMachine
    private let parser: XMLStreamParser
    private let domain: String
    private let accepted: EventLoopPromise<Void>
    private let terminated: EventLoopPromise<XMPPClientError?>
    private let handshakeTimeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?
    private var closeReason: XMPPClientError?
    private var sentStreamClose = false
    private var events: [XMLStreamEvent] = []

    init(
        machine: ComponentNegotiationStateMachine, limits: XMLStreamLimits, domain: String, handshakeTimeout: TimeAmount,
        accepted: EventLoopPromise<Void>, terminated: EventLoopPromise<XMPPClientError?>, logger: Logger
    ) {
        self.machine = machine
        self.parser = XMLStreamParser(limits: limits, namespaceAlias: (XMPPNamespace.componentAccept, XMPPNamespace.client))
        self.domain = domain
        self.handshakeTimeout = handshakeTimeout
        self.accepted = accepted
        self.terminated = terminated
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.deadline = context.eventLoop.scheduleTask(in: self.handshakeTimeout) {
            let (handler, context) = loopBound.value
            handler.run(handler.machine.timedOut(), context: context)
        }
        if context.channel.isActive {
            self.run(self.machine.connected(), context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.run(self.machine.connected(), context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.deadline?.cancel()
        self.run(self.machine.streamClosed(), context: context)
        self.accepted.fail(self.closeReason ?? XMPPClientError.closedByServer)
        self.terminated.succeed(self.closeReason)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.logger.debug("component connection error", metadata: ["error": "\(error)"])
        if self.closeReason == nil { self.closeReason = .connectFailed(attempts: ["\(error)"]) }
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = self.unwrapInboundIn(data)
        var decodeError: XMLStreamError?
        do {
            try self.parser.feed(bytes, into: &self.events)
        } catch {
            decodeError = error
        }
        for event in self.events {
            let action: ComponentNegotiationStateMachine.Action
            switch event {
            case .streamOpened(let attributes): action = self.machine.streamOpened(attributes: attributes)
            case .element(let element): action = self.machine.elementReceived(element)
            case .streamClosed: action = self.machine.streamClosed()
            }
            if self.run(action, context: context) { break }
        }
        self.events.removeAll(keepingCapacity: true)
        if let decodeError {
            self.logger.warning("invalid XML from server", metadata: ["error": "\(decodeError)"])
            self.run(self.machine.decodingFailed(decodeError), context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(self.wrapOutboundOut(self.serialize(self.unwrapOutboundIn(data), context: context)), promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is XMPPClientChannelHandler.CloseStream else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        self.run(self.machine.closeRequested(), context: context)
        promise?.succeed(())
    }

    /// Carries out one action; returns whether reading must stop (the stream ended).
    @discardableResult
    private func run(_ action: ComponentNegotiationStateMachine.Action, context: ChannelHandlerContext) -> Bool {
        switch action {
        case .none:
            return false
        case .sendStreamHeader:
            var buffer = context.channel.allocator.buffer(capacity: 160)
            XMLSerializer.writeComponentStreamHeader(to: self.domain, into: &buffer)
            context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
            return false
        case .send(let element):
            context.writeAndFlush(self.wrapOutboundOut(self.serialize(element, context: context)), promise: nil)
            return false
        case .ready:
            self.deadline?.cancel()
            self.accepted.succeed(())
            return false
        case .emit(let element):
            context.fireChannelRead(self.wrapInboundOut(element))
            return false
        case .closeWithStreamError(let condition, let error):
            self.closeReason = error
            self.accepted.fail(error)
            guard context.channel.isActive, !self.sentStreamClose else {
                context.close(promise: nil)
                return true
            }
            self.sentStreamClose = true
            var buffer = context.channel.allocator.buffer(capacity: 128)
            XMLSerializer.writeStreamError(condition, into: &buffer)
            context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
            context.close(promise: nil)
            return true
        case .close(let error):
            self.closeReason = error
            self.accepted.fail(error)
            self.writeStreamClose(context: context)
            context.close(promise: nil)
            return true
        case .sendStreamClose:
            self.writeStreamClose(context: context)
            return false
        case .finish:
            context.close(promise: nil)
            return true
        }
    }

    /// `element` in the stream's namespace: written as if `jabber:client` were the parent,
    /// so a stanza in it carries no `xmlns` and takes the stream's.
    private func serialize(_ element: XMLElement, context: ChannelHandlerContext) -> ByteBuffer {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        XMLSerializer.write(element, parentNamespace: XMPPNamespace.client, into: &buffer)
        return buffer
    }

    private func writeStreamClose(context: ChannelHandlerContext) {
        guard context.channel.isActive, !self.sentStreamClose else { return }
        self.sentStreamClose = true
        var buffer = context.channel.allocator.buffer(capacity: 32)
        XMLSerializer.writeStreamClose(into: &buffer)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
    }
}
