import NIOConcurrencyHelpers

/// The first-level elements a server sends on a negotiated stream (RFC 6120 §4.1, §8), kept
/// in order until they are taken, with back-pressure: once `highWatermark` wait, the
/// connection stops reading its socket until they are taken, so a fast server cannot grow
/// memory without bound (at most a taken batch and a full inbox are held).
///
/// Nothing has to wait in a task for them (issue 43: a task keeps its largest stack of async
/// frames for life): a consumer registers a wake-up (``whenAdded(_:)``), called when elements
/// arrive in an empty inbox and once when the stream ends, and takes what waits
/// (``take()``), typically from a ``Drain``. ``XMPPElementSequence`` reads it as an async
/// sequence instead, for a consumer that keeps a task. One consumer per inbox.
public final class ElementInbox: Sendable {
    /// What a take found.
    public enum Taken {
        /// Elements, in the order read.
        case elements([XMLElement])
        /// The stream ended and everything before the end was taken; said once.
        case ended
        /// Nothing waits now.
        case nothing
    }

    /// What the inbox holds and decides; no I/O, no callbacks.
    struct State {
        /// What follows an element added.
        struct Added: Equatable {
            /// The inbox was empty: the consumer is woken.
            var wake = false
            /// The high watermark was reached: the socket's reading stops.
            var stopReading = false
        }

        let highWatermark: Int
        var waiting: [XMLElement] = []
        var finished = false
        var endTaken = false
        var reading = true

        init(highWatermark: Int) {
            self.highWatermark = max(1, highWatermark)
        }

        mutating func add(_ element: XMLElement) -> Added {
            guard !self.finished else { return Added() }
            self.waiting.append(element)
            var added = Added(wake: self.waiting.count == 1)
            if self.reading, self.waiting.count >= self.highWatermark {
                self.reading = false
                added.stopReading = true
            }
            return added
        }

        /// Everything that waits; whether reading resumes.
        mutating func take() -> (Taken, resumeReading: Bool) {
            if !self.waiting.isEmpty {
                let taken = self.waiting
                self.waiting = []
                let resume = !self.reading && !self.finished
                if resume { self.reading = true }
                return (.elements(taken), resume)
            }
            guard self.finished, !self.endTaken else { return (.nothing, false) }
            self.endTaken = true
            return (.ended, false)
        }

        /// Whether this ended the stream (the consumer is woken once more). `discarding`:
        /// what waits is dropped, not taken (the consumer gave up on the connection).
        mutating func finish(discarding: Bool = false) -> Bool {
            if discarding { self.waiting = [] }
            guard !self.finished else { return false }
            self.finished = true
            return true
        }

        /// Whether a consumer has something to take, or will never have more: a waiter
        /// would not be woken again.
        var hasNews: Bool { !self.waiting.isEmpty || self.finished }
    }

    /// The state, and who is woken by it: the wake-up is dropped when the stream ends
    /// (the consumer is let go of; its last run takes the end), the waiter when resumed.
    private struct Storage {
        var state: State
        var wake: (@Sendable () -> Void)?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let storage: NIOLockedValueBox<Storage>
    private let readingControl: @Sendable (_ current: @escaping @Sendable () -> Bool) -> Void
    private let terminate: @Sendable () -> Void

    /// An inbox that stops reading at `highWatermark` elements waiting. `readingControl`
    /// is called after each change of whether the socket is read, with a way to read
    /// whether it is now (calls may come from two threads: the connection applies the
    /// current value, not the change); `terminate` closes the connection (its consumer
    /// gave up).
    init(
        highWatermark: Int,
        readingControl: @escaping @Sendable (_ current: @escaping @Sendable () -> Bool) -> Void,
        terminate: @escaping @Sendable () -> Void
    ) {
        self.storage = NIOLockedValueBox(Storage(state: State(highWatermark: highWatermark)))
        self.readingControl = readingControl
        self.terminate = terminate
    }

    /// From now on `wake` runs when elements arrive in an empty inbox, and once when the
    /// stream ends; it runs now if something waits already.
    public func whenAdded(_ wake: @escaping @Sendable () -> Void) {
        let now = self.storage.withLockedValue { storage -> Bool in
            if !storage.state.finished { storage.wake = wake }
            return storage.state.hasNews
        }
        if now { wake() }
    }

    /// Takes everything that waits.
    public func take() -> Taken {
        let (taken, resume) = self.storage.withLockedValue { $0.state.take() }
        if resume { self.readingControl(self.isReading) }
        return taken
    }

    /// Whether the socket is read now (no high watermark reached, or taken since).
    @Sendable func isReading() -> Bool {
        self.storage.withLockedValue { $0.state.reading }
    }

    /// Whether a consumer of ``XMPPElementSequence`` waits for news (for tests).
    var hasWaiter: Bool { self.storage.withLockedValue { $0.waiter != nil } }

    /// One element read (on the connection's event loop).
    func add(_ element: XMLElement) {
        let (added, wake, waiter) = self.storage.withLockedValue { storage in
            let added = storage.state.add(element)
            guard added.wake else { return (added, nil as (@Sendable () -> Void)?, nil as CheckedContinuation<Void, Never>?) }
            defer { storage.waiter = nil }
            return (added, storage.wake, storage.waiter)
        }
        if added.stopReading { self.readingControl(self.isReading) }
        waiter?.resume()
        wake?()
    }

    /// The stream ended (the connection closed): the consumer is woken once more, then let
    /// go. `discarding`: what was not taken yet is dropped (the consumer gave up).
    public func finish(discarding: Bool = false) {
        let (wake, waiter) = self.storage.withLockedValue { storage in
            guard storage.state.finish(discarding: discarding) else { return (nil as (@Sendable () -> Void)?, nil as CheckedContinuation<Void, Never>?) }
            defer { (storage.wake, storage.waiter) = (nil, nil) }
            return (storage.wake, storage.waiter)
        }
        waiter?.resume()
        wake?()
    }

    /// Returns once something waits or the stream ended; a cancelled wait closes the
    /// connection, whose end it then returns at.
    func waitForNews() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (now, replaced) = self.storage.withLockedValue { storage -> (Bool, CheckedContinuation<Void, Never>?) in
                    if storage.state.hasNews { return (true, nil) }
                    // One consumer: a second one's wait would leave the first hanging.
                    defer { storage.waiter = continuation }
                    return (false, storage.waiter)
                }
                replaced?.resume()
                if now { continuation.resume() }
            }
        } onCancel: {
            self.terminate()
            // The connection may already be gone; the waiter must not be left hanging.
            self.finish(discarding: true)
        }
    }
}
