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
            readingControl: { on in channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in } },
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
