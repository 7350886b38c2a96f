/// The tests' one poll loop, for state only a real server or another process reaches
/// (nothing to wait on as an event): checks `condition` every `interval` until it holds or
/// `timeout` has passed, and returns its last value. The timeout is a failure bound, not a
/// synchronisation: a passing test ends as soon as the condition holds. In-process state
/// that tasks reach uses ``untilTrue(_:)``; time-driven logic uses the manual clock.
nonisolated(nonsending) public func eventually(
    timeout: Duration = .seconds(15), every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    try await eventuallyValue(timeout: timeout, every: interval) { try await condition() ? true : nil } ?? false
}

/// ``eventually(timeout:every:_:)`` for a value: the first non-nil one, or nil after `timeout`.
nonisolated(nonsending) public func eventuallyValue<T>(
    timeout: Duration = .seconds(15), every interval: Duration = .milliseconds(20), _ value: () async throws -> T?
) async rethrows -> T? {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if let found = try await value() { return found }
        try? await Task.sleep(for: interval)
    }
    return try await value()
}
