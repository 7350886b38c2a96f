import NIOConcurrencyHelpers

/// Where one answer lands: an IQ result (RFC 6120 §8.2.3) or a stream management
/// acknowledgement (XEP-0198). It is registered before the request is written, so an
/// answer that comes back before anyone waits is kept, and it is completed exactly once:
/// by the answer, a timeout, or the end of the connection.
final class OneShotWaiter<Value: Sendable>: Sendable {
    private enum State {
        case waiting
        case awaited(CheckedContinuation<Value, any Error>)
        case done(Result<Value, any Error>)
        case delivered
    }

    private let state = NIOLockedValueBox(State.waiting)

    /// Completes the request; later calls do nothing.
    func complete(_ result: Result<Value, any Error>) {
        let continuation = self.state.withLockedValue { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .waiting:
                state = .done(result)
                return nil
            case .awaited(let continuation):
                state = .delivered
                return continuation
            case .done, .delivered:
                return nil
            }
        }
        continuation?.resume(with: result)
    }

    /// The answer, once there is one. Call once.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready = self.state.withLockedValue { state -> Result<Value, any Error>? in
                switch state {
                case .waiting:
                    state = .awaited(continuation)
                    return nil
                case .done(let result):
                    state = .delivered
                    return result
                case .awaited, .delivered:
                    return .failure(XMPPSessionError.writeFailed("the answer was already taken"))
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

extension OneShotWaiter {
    /// The answer, or `fallback` at `deadline` on `clock` (never, when nil) or when the task
    /// is cancelled, whichever comes first; the sleep is a child task, ended with the wait.
    func value<C: Clock>(until deadline: C.Instant?, on clock: C, orElse fallback: Value, executor: (any TaskExecutor)?) async -> Value {
        await withTaskGroup(of: Void.self) { group in
            if let deadline {
                group.addTask(executorPreference: executor) {
                    _ = try? await clock.sleep(until: deadline, tolerance: nil)
                    self.complete(.success(fallback))
                }
            }
            let value = await withTaskCancellationHandler {
                try? await self.value()
            } onCancel: {
                self.complete(.success(fallback))
            }
            group.cancelAll()
            return value ?? fallback
        }
    }
}
