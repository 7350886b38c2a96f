import NIOCore

/// Last inbound handler of a client pipeline: hands negotiated-stream elements to an
/// async sequence with backpressure. When the consumer falls behind the high watermark,
/// reading from the socket stops (`autoRead` off) until it catches up, so a fast server
/// cannot grow memory without bound.
final class ElementStreamHandler: ChannelInboundHandler {
    typealias InboundIn = XMLElement
    typealias Producer = NIOAsyncSequenceProducer<
        XMLElement, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Delegate
    >

    /// Resumes reading when the consumer asks for more; closes the channel when it stops consuming.
    struct Delegate: NIOAsyncSequenceProducerDelegate {
        let channel: any Channel

        func produceMore() {
            self.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }

        func didTerminate() {
            self.channel.close(promise: nil)
        }
    }

    private let source: Producer.Source

    init(source: Producer.Source) {
        self.source = source
    }

    /// A sequence and the handler feeding it, for `channel`.
    static func make(for channel: any Channel, lowWatermark: Int = 64, highWatermark: Int = 1024) -> (Producer, ElementStreamHandler) {
        let result = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: lowWatermark, highWatermark: highWatermark),
            finishOnDeinit: false,
            delegate: Delegate(channel: channel)
        )
        return (result.sequence, ElementStreamHandler(source: result.source))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.source.yield(self.unwrapInboundIn(data)) {
        case .produceMore:
            break
        case .stopProducing:
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        case .dropped:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.source.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.source.finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The negotiation handler already recorded and reported the error.
    }
}
