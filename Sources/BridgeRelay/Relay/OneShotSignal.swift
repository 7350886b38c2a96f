import NIOConcurrencyHelpers

/// A signal that fires once: ``wait()`` returns once ``fire()`` was called, before or
/// after; later calls to either do nothing more. For one waiter (the delivery worker
/// waiting for its batch to be written).
package final class OneShotSignal: Sendable {
    private let state = NIOLockedValueBox<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    package func fire() {
        let waiter = self.state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard !state.fired else { return nil }
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    package func wait() async {
        await withCheckedContinuation { continuation in
            let now = self.state.withLockedValue { state -> Bool in
                if state.fired { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
