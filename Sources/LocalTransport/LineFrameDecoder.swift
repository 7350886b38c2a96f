import NIOCore
import TransportCore

/// Splits a byte stream into ``LineSplitter/Line``s for a NIO pipeline (Unix socket
/// clients), with the same limits and UTF-8 policy as the other local inputs.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineSplitter.Line

    private var splitter: LineSplitter
    private var lines: [LineSplitter.Line] = []

    public init(splitter: LineSplitter) {
        self.splitter = splitter
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        buffer.withUnsafeReadableBytes { self.splitter.feed($0, into: &self.lines) }
        buffer.moveReaderIndex(to: buffer.writerIndex)
        self.emit(context)
        return .needMoreData
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        _ = try self.decode(context: context, buffer: &buffer)
        self.splitter.finish(into: &self.lines)
        self.emit(context)
        return .needMoreData
    }

    private mutating func emit(_ context: ChannelHandlerContext) {
        for line in self.lines {
            context.fireChannelRead(NIOAny(line))
        }
        self.lines.removeAll(keepingCapacity: true)
    }
}
