/// A callback a ``CallbackClock`` will call; cancelling it after the call does nothing.
public struct ScheduledCallback: Sendable {
    private let cancellation: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) {
        self.cancellation = cancel
    }

    /// The callback will not be called (unless it is being called already).
    public func cancel() {
        self.cancellation()
    }
}
