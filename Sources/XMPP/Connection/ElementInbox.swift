import NIOConcurrencyHelpers

/// The first-level elements a server sends on a negotiated stream (RFC 6120 §4.1, §8), kept
/// in order until they are taken, with back-pressure: once `highWatermark` wait, the
/// connection stops reading its socket until they are taken, so a fast server cannot grow
/// memory without bound (at most a taken batch and a full inbox are held).
///
/// Nothing has to wait in a task for them (issue 43: a task keeps its largest stack of async
/// frames for life): a consumer registers a wake-up (``whenAdded(_:)``), called when elements
/// arrive in an empty inbox and when the stream ends, and takes what waits (``take()``),
/// typically from a ``Drain``. ``XMPPElementSequence`` reads it as an async sequence instead,
/// for a consumer that keeps a task. One consumer per inbox.
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

    /// The inbox's bookkeeping; no I/O.
    struct State {
        /// What the handler does after an element is added.
        struct Added: Equatable {
            var wake = false
            var stopReading = false
        }

        let highWatermark: Int
        var waiting: [XMLElement] = []
        var finished = false
        var endTaken = false
        var reading = true
        var wake: (@Sendable () -> Void)?
        var waiter: CheckedContinuation<Void, Never>?

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
            self.wake = nil  // nothing more to wake it for: lets go of the consumer
            return (.ended, false)
        }

        /// Whether this ended the stream (the consumer is woken once more).
        mutating func finish() -> Bool {
            guard !self.finished else { return false }
            self.finished = true
            return true
        }

        var hasNews: Bool { !self.waiting.isEmpty || (self.finished && !self.endTaken) }
    }

    private let state: NIOLockedValueBox<State>
    private let readingControl: @Sendable (_ on: Bool) -> Void
    private let terminate: @Sendable () -> Void

    /// An inbox that stops reading at `highWatermark` elements waiting; `readingControl`
    /// turns reading off and on, `terminate` closes the connection (its consumer gave up).
    init(
        highWatermark: Int,
        readingControl: @escaping @Sendable (_ on: Bool) -> Void,
        terminate: @escaping @Sendable () -> Void
    ) {
        self.state = NIOLockedValueBox(State(highWatermark: highWatermark))
        self.readingControl = readingControl
        self.terminate = terminate
    }

    /// From now on `wake` runs when elements arrive in an empty inbox, and once when the
    /// stream ends; it runs now if something waits already.
    public func whenAdded(_ wake: @escaping @Sendable () -> Void) {
        let now = self.state.withLockedValue { state -> Bool in
            state.wake = wake
            return state.hasNews
        }
        if now { wake() }
    }

    /// Takes everything that waits.
    public func take() -> Taken {
        let (taken, resume) = self.state.withLockedValue { $0.take() }
        if resume { self.readingControl(true) }
        return taken
    }

    /// One element read (on the connection's event loop).
    func add(_ element: XMLElement) {
        let (added, wake, waiter) = self.state.withLockedValue { state in
            let added = state.add(element)
            let waiter = added.wake ? state.waiter.take() : nil
            return (added, added.wake ? state.wake : nil, waiter)
        }
        if added.stopReading { self.readingControl(false) }
        waiter?.resume()
        wake?()
    }

    /// The stream ended (the connection closed).
    func finish() {
        let (wake, waiter) = self.state.withLockedValue { state in
            state.finish() ? (state.wake, state.waiter.take()) : (nil, nil)
        }
        waiter?.resume()
        wake?()
    }

    /// Returns once something waits (or the stream ended); a cancelled wait closes the
    /// connection, whose end it then returns at.
    func waitForNews() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = self.state.withLockedValue { state -> Bool in
                    if state.hasNews { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            self.terminate()
            // The connection may already be gone; the waiter must not be left hanging.
            self.finish()
        }
    }
}
