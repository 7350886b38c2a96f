import NIOConcurrencyHelpers

/// Bounds how many sessions connect and log in at once (TCP, TLS, SASL, bind or resume),
/// shared by every account of a process on one server (``ConnectionGates``): a bridge with
/// thousands of accounts starts (or reconnects after its server came back) as a paced queue
/// instead of a storm that floods the server, the loop and the log with timeouts. Waiters
/// are let in in arrival order; a cancelled waiter leaves the queue.
public final class ConnectionGate: Sendable {
    private struct State {
        var inUse = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    /// Logins that may run at the same time.
    public let limit: Int
    private let state = NIOLockedValueBox(State())

    public init(limit: Int) {
        precondition(limit > 0, "a gate lets at least one in")
        self.limit = limit
    }

    /// Returns once a place is free (then held until ``release()``); throws
    /// `CancellationError` if the task is cancelled while it waits.
    public func acquire() async throws {
        let id = self.state.withLockedValue { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock: a cancellation that came before this queued the
                // waiter found nothing to remove, so it must not queue now.
                let admitted = self.state.withLockedValue { state -> Bool? in
                    if Task.isCancelled { return nil }
                    guard state.inUse < self.limit, state.waiters.isEmpty else {
                        state.waiters.append((id, continuation))
                        return false
                    }
                    state.inUse += 1
                    return true
                }
                switch admitted {
                case nil: continuation.resume(throwing: CancellationError())
                case true: continuation.resume()
                case false: break
                }
            }
        } onCancel: {
            let waiter = self.state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Frees a place taken by ``acquire()``; the longest waiter gets it.
    public func release() {
        let next = self.state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.inUse = max(0, state.inUse - 1)
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }

    /// Places taken and waiters (for tests and status).
    public var usage: (inUse: Int, waiting: Int) {
        self.state.withLockedValue { ($0.inUse, $0.waiters.count) }
    }
}
