import NIOCore

/// Last inbound handler of a client or component pipeline: puts the negotiated stream's
/// elements in the connection's ``ElementInbox``. When too many wait there, reading from the
/// socket stops (`autoRead` off) until they are taken, so a fast server cannot grow memory
/// without bound.
final class ElementStreamHandler: ChannelInboundHandler {
    typealias InboundIn = XMLElement

    let inbox: ElementInbox

    /// A handler and the inbox it fills, for `channel`.
    init(for channel: any Channel, highWatermark: Int = 1024) {
        self.inbox = ElementInbox(
            highWatermark: highWatermark,
            // Applied on the loop, in the order of the calls, as it is then: a stop made on the
            // loop and a resume made on the consumer's executor cannot cross.
            readingControl: { current in
                let apply: @Sendable () -> Void = { channel.setOption(ChannelOptions.autoRead, value: current()).whenComplete { _ in } }
                if channel.eventLoop.inEventLoop { apply() } else { channel.eventLoop.execute(apply) }
            },
            terminate: { channel.close(promise: nil) }
        )
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.inbox.add(self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.inbox.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.inbox.finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The negotiation handler already recorded and reported the error.
    }
}
