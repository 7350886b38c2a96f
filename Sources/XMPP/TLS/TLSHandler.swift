import NIOCore

/// Runs a ``TLSConnection`` in a channel pipeline: ciphertext on the network side,
/// plaintext on the application side (RFC 6120 §5; XEP-0368 for Direct TLS).
///
/// Writes made before the handshake completes are held and sent after it. When the
/// handshake completes, ``TLSUserEvent/handshakeCompleted(protocolVersion:channelBinding:)``
/// is fired inbound. Failures (including a rejected certificate) are fired as
/// ``TLSError`` and the channel is closed.
public final class TLSHandler: ChannelDuplexHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private enum State {
        case idle
        case handshaking
        case active
        case closing
        case closed
    }

    private let connection: TLSConnection
    private var state = State.idle
    private var pendingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var plaintext = ByteBuffer()

    /// - Parameters:
    ///   - context: client (or, in tests, server) TLS context.
    ///   - expectedHost: the name the server certificate must carry (the JID domain); also sent as SNI.
    public init(context: TLSContext, expectedHost: String?) throws(TLSError) {
        self.connection = try TLSConnection(context: context, expectedHost: expectedHost)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            self.startHandshake(context: context)
        }
    }

    public func channelActive(context: ChannelHandlerContext) {
        self.startHandshake(context: context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        self.state = .closed
        self.failPendingWrites(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ciphertext = self.unwrapInboundIn(data)
        switch self.state {
        case .idle, .closed:
            return
        case .handshaking:
            self.connection.consumeDataFromNetwork(ciphertext)
            self.continueHandshake(context: context)
        case .active, .closing:
            self.connection.consumeDataFromNetwork(ciphertext)
            self.readPlaintext(context: context)
        }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        self.flushNetwork(context: context)
        context.fireChannelReadComplete()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = self.unwrapOutboundIn(data)
        switch self.state {
        case .idle, .handshaking:
            self.pendingWrites.append((buffer, promise))
        case .active:
            self.encrypt(buffer, promise: promise, context: context)
        case .closing, .closed:
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    public func flush(context: ChannelHandlerContext) {
        if case .active = self.state {
            context.flush()
        }
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch self.state {
        case .active:
            self.state = .closing
            self.connection.shutdown()
            self.flushNetwork(context: context)
        case .idle, .handshaking, .closing, .closed:
            break
        }
        self.failPendingWrites(ChannelError.ioOnClosedChannel)
        context.close(mode: mode, promise: promise)
    }

    /// Gives back the connection's TLS buffers while it is idle (``TLSConnection/trimBuffers()``);
    /// false unless the session is established (writes wait only during the handshake) and
    /// neither direction holds a byte.
    func trimBuffers() -> Bool {
        guard case .active = self.state else { return false }
        return self.connection.trimBuffers()
    }

    // MARK: -

    private func startHandshake(context: ChannelHandlerContext) {
        guard case .idle = self.state else { return }
        self.state = .handshaking
        self.continueHandshake(context: context)
    }

    private func continueHandshake(context: ChannelHandlerContext) {
        switch self.connection.doHandshake() {
        case .incomplete:
            self.flushNetwork(context: context)
        case .complete:
            self.state = .active
            self.flushNetwork(context: context)
            // Writes queued during the handshake go first, then whatever the event causes.
            let writes = self.pendingWrites
            self.pendingWrites.removeAll()
            for (buffer, promise) in writes {
                self.encrypt(buffer, promise: promise, context: context)
            }
            if !writes.isEmpty { context.flush() }
            context.fireUserInboundEventTriggered(
                TLSUserEvent.handshakeCompleted(
                    protocolVersion: self.connection.protocolVersion,
                    channelBinding: self.connection.channelBindingData
                )
            )
            // Application data may have come with the last handshake flight.
            self.readPlaintext(context: context)
        case .closed:
            self.fail(TLSError(.closedByPeer), context: context)
        case .failed(let error):
            self.fail(error, context: context)
        }
    }

    private func readPlaintext(context: ChannelHandlerContext) {
        let outcome = self.connection.readPlaintext(into: &self.plaintext)
        if self.plaintext.readableBytes > 0 {
            context.fireChannelRead(self.wrapInboundOut(self.plaintext))
        }
        // Not kept between reads: an idle connection holds no 16 KiB buffer (thousands of
        // accounts), and a busy one pays one allocation per read.
        self.plaintext = ByteBuffer()
        switch outcome {
        case .complete, .incomplete:
            self.flushNetwork(context: context)
        case .closed:
            // close_notify from the peer: answer it and close.
            self.state = .closing
            self.connection.shutdown()
            self.flushNetwork(context: context)
            context.close(promise: nil)
        case .failed(let error):
            self.fail(error, context: context)
        }
    }

    private func encrypt(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        switch self.connection.writePlaintext(buffer) {
        case .incomplete:
            // With renegotiation disabled a write cannot wait for a read; never drop a partial buffer.
            let error = TLSError(.ioFailed, openSSLErrors: ["TLS write could not complete"])
            promise?.fail(error)
            self.fail(error, context: context)
        case .complete:
            if let ciphertext = self.connection.dataForNetwork(allocator: context.channel.allocator) {
                context.write(self.wrapOutboundOut(ciphertext), promise: promise)
            } else {
                promise?.succeed(())
            }
        case .closed:
            promise?.fail(TLSError(.closedByPeer))
        case .failed(let error):
            promise?.fail(error)
            self.fail(error, context: context)
        }
    }

    private func flushNetwork(context: ChannelHandlerContext) {
        if let ciphertext = self.connection.dataForNetwork(allocator: context.channel.allocator) {
            context.writeAndFlush(self.wrapOutboundOut(ciphertext), promise: nil)
        }
    }

    private func fail(_ error: TLSError, context: ChannelHandlerContext) {
        switch self.state {
        case .closed: return
        case .idle, .handshaking, .active, .closing: break
        }
        self.state = .closed
        self.flushNetwork(context: context)  // a pending alert, if any
        self.failPendingWrites(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    private func failPendingWrites(_ error: any Error) {
        let writes = self.pendingWrites
        self.pendingWrites.removeAll()
        for (_, promise) in writes {
            promise?.fail(error)
        }
    }
}
