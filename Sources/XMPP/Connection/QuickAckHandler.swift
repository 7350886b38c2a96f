import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Re-arms `TCP_QUICKACK` after every read. XMPP servers answer a request in several
/// small writes (Prosody: session ticket, then stream features); with the peer's Nagle
/// algorithm and our delayed ACK, each such pair stalls 40 ms. Acknowledging at once
/// removes that stall from login and from request/response round trips.
final class QuickAckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelActive(context: ChannelHandlerContext) {
        self.arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.arm(context)
        context.fireChannelRead(data)
    }

    private func arm(_ context: ChannelHandlerContext) {
        #if os(Linux)
        let option = ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: TCP_QUICKACK))
        // On the channel's own loop: set at once, without a future per read.
        if let options = context.channel.syncOptions {
            try? options.setOption(option, value: 1)
        } else {
            context.channel.setOption(option, value: 1).whenFailure { _ in }
        }
        #endif
    }
}
