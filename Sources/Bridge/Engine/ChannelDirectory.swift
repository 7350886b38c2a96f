import NIOConcurrencyHelpers

/// The channel names that exist right now, readable from any thread (socket clients
/// check names against it); the runtime updates it on reloads and route changes.
final class ChannelDirectory: Sendable {
    private let box = NIOLockedValueBox<Set<String>>([])

    var names: Set<String> {
        get { self.box.withLockedValue { $0 } }
        set { self.box.withLockedValue { $0 = newValue } }
    }
}
