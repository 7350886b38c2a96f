import HTTPIngress
import NIOConcurrencyHelpers
import TransportCore

/// The channel names that exist right now, and their webhook templates, readable from any
/// thread (socket and HTTP clients check names against it); the runtime updates it on
/// reloads and route changes.
package final class ChannelDirectory: Sendable {
    private let box = NIOLockedValueBox<Set<String>>([])
    private let templateBox = NIOLockedValueBox<[String: WebhookTemplate]>([:])

    package var names: Set<String> {
        get { self.box.withLockedValue { $0 } }
        set { self.box.withLockedValue { $0 = newValue } }
    }

    /// Channel → its `template_file`, parsed.
    package var templates: [String: WebhookTemplate] {
        get { self.templateBox.withLockedValue { $0 } }
        set { self.templateBox.withLockedValue { $0 = newValue } }
    }

    package func template(for channel: String) -> WebhookTemplate? {
        self.templateBox.withLockedValue { $0[channel] }
    }
}
