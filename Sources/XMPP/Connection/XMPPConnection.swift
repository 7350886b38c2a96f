import NIOCore

/// An authenticated, bound client stream (RFC 6120 §7.7): send stanzas, read what
/// arrives, close cleanly.
///
/// Higher layers (stanza types, IQ tracking, roster) are built on this handle.
public final class XMPPConnection: Sendable {
    /// The full JID the server bound.
    public let jid: JID
    /// Features of the final (post-authentication) stream.
    public let features: StreamFeatures
    /// Every first-level element the server sends after negotiation, in order, until the
    /// connection closes: taken when woken (a session's ``Drain``), or read as ``elements``.
    /// One consumer.
    public let inbox: ElementInbox
    /// The ``inbox`` as an async sequence, for a consumer that keeps a task for it.
    public var elements: XMPPElementSequence { XMPPElementSequence(inbox: self.inbox) }
    /// The SASL mechanism that authenticated the stream.
    public let mechanism: SASLMechanism?
    /// Where this connection went.
    public let target: ConnectionTarget
    /// The server's answer when a stream management session was to be resumed
    /// (`<resumed/>`: this stream continues it; `<failed/>`: a new session was bound).
    public let resumeAnswer: XMLElement?
    /// How the stream logged in: profile, mechanism, channel binding, FAST's token news and
    /// what Bind 2 enabled on the way.
    public let login: LoginOutcome
    let channel: any Channel
    private let terminated: EventLoopFuture<XMPPClientError?>

    init(
        jid: JID, features: StreamFeatures, mechanism: SASLMechanism?, inbox: ElementInbox,
        target: ConnectionTarget, channel: any Channel, terminated: EventLoopFuture<XMPPClientError?>, resumeAnswer: XMLElement? = nil,
        login: LoginOutcome = LoginOutcome()
    ) {
        self.login = login
        self.terminated = terminated
        self.resumeAnswer = resumeAnswer
        self.jid = jid
        self.mechanism = mechanism
        self.features = features
        self.inbox = inbox
        self.target = target
        self.channel = channel
    }

    /// Writes one stanza (in `jabber:client` unless it names another namespace).
    public func send(_ element: XMLElement) async throws {
        try await self.channel.writeAndFlush(element)
    }

    /// Writes several stanzas with one flush; returns when the last is written.
    public func send(_ elements: [XMLElement]) async throws {
        guard let last = elements.last else { return }
        for element in elements.dropLast() {
            self.channel.write(element, promise: nil)
        }
        try await self.channel.writeAndFlush(last)
    }

    /// Writes several stanzas with one flush; `written` runs on the connection's event loop
    /// the moment the last is in the kernel's socket buffer (before any other event is
    /// handled), so what it records is exact; it does not run when the write fails.
    public func send(_ elements: [XMLElement], written: @escaping @Sendable () -> Void) async throws {
        guard let last = elements.last else { return }
        for element in elements.dropLast() {
            self.channel.write(element, promise: nil)
        }
        let promise = self.channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenSuccess { written() }
        self.channel.writeAndFlush(last, promise: promise)
        try await promise.futureResult.get()
    }

    /// Writes and flushes one stanza without waiting for the write; a failed write shows
    /// as the connection closing.
    public func write(_ element: XMLElement) {
        self.channel.writeAndFlush(element, promise: nil)
    }

    /// Whether the TCP connection is still open.
    public var isActive: Bool { self.channel.isActive }

    /// Closes the stream (`</stream:stream>`), waits up to `timeout` for the server to
    /// close its side, then closes the connection (RFC 6120 §4.4).
    public func close(timeout: Duration = .seconds(2)) async {
        guard self.channel.isActive else { return }
        try? await self.channel.triggerUserOutboundEvent(XMPPClientChannelHandler.CloseStream()).get()
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
        deadline.cancel()
    }

    /// Drops the TCP connection without closing the stream: the server treats it as a lost
    /// connection, so a stream management session stays resumable (XEP-0198 §5), where
    /// `</stream:stream>` would end it.
    public func abort() async {
        try? await self.channel.close()
    }

    /// Waits until the connection has closed; nil when it ended cleanly (we or the server
    /// closed the stream), else why it ended (stream error, invalid XML, lost connection).
    @discardableResult
    public func closed() async -> XMPPClientError? {
        do {
            return try await self.terminated.get()
        } catch {
            return .closedByServer
        }
    }
}

extension Duration {
    /// Whole nanoseconds, saturating instead of overflowing for huge values.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = self.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : sum
    }
}
