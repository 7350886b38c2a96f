import NIOConcurrencyHelpers

/// The events of an ``XMPPSession``, in order, with a bounded buffer. When the consumer
/// is `capacity` events behind, a waiting stream (the bridge) makes ``send(_:)`` wait, so
/// the session stops reading its connection and the connection's own watermark turns socket
/// reads off: nothing is dropped. A dropping stream (commands that read few events, such as
/// `send`) drops the new event instead and says so. Iterate it once, or take the events
/// with ``nextBuffered()`` when ``whenAdded(_:)`` says some came (a consumer without a task
/// of its own while none wait).
public final class SessionEventStream: AsyncSequence, Sendable {
    public typealias Element = XMPPSessionEvent
    public typealias Failure = Never

    private enum Taken {
        case event(XMPPSessionEvent)
        case end
        case waiting
    }

    private struct State {
        var buffer: [XMPPSessionEvent] = []
        var head = 0
        var finished = false
        var consumer: CheckedContinuation<XMPPSessionEvent?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
        /// Told after each event added and at the end.
        var added: (@Sendable () -> Void)?

        var count: Int { self.buffer.count - self.head }

        mutating func pop() -> XMPPSessionEvent? {
            guard self.head < self.buffer.count else { return nil }
            let event = self.buffer[self.head]
            self.head += 1
            if self.head > 64, self.head * 2 > self.buffer.count {
                self.buffer.removeFirst(self.head)
                self.head = 0
            }
            return event
        }
    }

    private let capacity: Int
    private let waits: Bool
    private let state = NIOLockedValueBox(State())

    /// - Parameter waitsWhenFull: wait for the consumer (true) or drop new events (false).
    public init(capacity: Int, waitsWhenFull: Bool) {
        self.capacity = Swift.max(1, capacity)
        self.waits = waitsWhenFull
    }

    /// Adds `event`; when the buffer is full, waits for room or drops it (returns false).
    @discardableResult
    func send(_ event: XMPPSessionEvent) async -> Bool {
        while self.waits, self.state.withLockedValue({ $0.count >= self.capacity && !$0.finished }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = self.state.withLockedValue { state -> Bool in
                    guard state.count >= self.capacity, !state.finished else { return true }
                    state.producers.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        let (consumer, accepted, added) = self.state.withLockedValue { state -> (CheckedContinuation<XMPPSessionEvent?, Never>?, Bool, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, false, nil) }
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, true, nil)
            }
            guard state.count < self.capacity else { return (nil, false, nil) }
            state.buffer.append(event)
            return (nil, true, state.added)
        }
        consumer?.resume(returning: event)
        added?()
        return accepted
    }

    /// Calls `added` after each event added to the buffer and once at the end, outside the
    /// stream's lock: a consumer that takes them with ``nextBuffered()`` (and sees the end
    /// with ``isFinished``) instead of iterating.
    public func whenAdded(_ added: @escaping @Sendable () -> Void) {
        let now = self.state.withLockedValue { state -> Bool in
            state.added = added
            return state.count > 0 || state.finished
        }
        if now { added() }
    }

    /// Whether the end came and no event waits any more.
    public var isFinished: Bool { self.state.withLockedValue { $0.finished && $0.count == 0 } }

    /// Whether events wait in the buffer (the consumer can tell the end of a burst).
    public var hasBuffered: Bool { self.state.withLockedValue { $0.count > 0 } }

    /// No more events; the consumer sees the end after the buffered ones.
    func finish() {
        let (consumer, producers, added) = self.state.withLockedValue {
            state -> (CheckedContinuation<XMPPSessionEvent?, Never>?, [CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) in
            let added = state.finished ? nil : state.added
            state.finished = true
            defer {
                state.consumer = nil
                state.producers.removeAll()
                // Told of the end once; the consumer is not kept alive from here.
                state.added = nil
            }
            return (state.count == 0 ? state.consumer : nil, state.producers, added)
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume() }
        added?()
    }

    private func next() async -> XMPPSessionEvent? {
        switch self.take(orWait: nil) {
        case .event(let event): return event
        case .end: return nil
        case .waiting: break
        }
        return await withCheckedContinuation { continuation in
            switch self.take(orWait: continuation) {
            case .event(let event): continuation.resume(returning: event)
            case .end: continuation.resume(returning: nil)
            case .waiting: break
            }
        }
    }

    /// The next event if one is buffered now (never waits): a consumer takes what the
    /// session read together as one batch.
    public func nextBuffered() -> XMPPSessionEvent? {
        if case .event(let event) = self.take(orWait: nil) { return event }
        return nil
    }

    /// The next buffered event (waking producers waiting for room), the end, or, with a
    /// continuation, registers it as the waiting consumer.
    private func take(orWait continuation: CheckedContinuation<XMPPSessionEvent?, Never>?) -> Taken {
        let (taken, producers) = self.state.withLockedValue { state -> (Taken, [CheckedContinuation<Void, Never>]) in
            if let event = state.pop() {
                guard state.count < self.capacity else { return (.event(event), []) }
                defer { state.producers.removeAll() }
                return (.event(event), state.producers)
            }
            if state.finished { return (.end, []) }
            if let continuation { state.consumer = continuation }
            return (.waiting, [])
        }
        for producer in producers { producer.resume() }
        return taken
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let stream: SessionEventStream

        public mutating func next() async -> XMPPSessionEvent? {
            await self.stream.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }
}
