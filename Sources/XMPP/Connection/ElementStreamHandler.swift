import NIOCore

/// Last inbound handler of a client pipeline: hands negotiated-stream elements to an
/// `AsyncStream` and finishes it when the channel closes.
final class ElementStreamHandler: ChannelInboundHandler {
    typealias InboundIn = XMLElement

    private let continuation: AsyncStream<XMLElement>.Continuation

    init(continuation: AsyncStream<XMLElement>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.continuation.yield(self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.continuation.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.continuation.finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Errors were already reported by the negotiation handler; nothing more to do.
    }
}
