import Foundation
import ServiceLifecycle

/// Lets the engine reach the service group that is created after it.
package final class GroupBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: ServiceGroup?

    package var group: ServiceGroup? {
        get { self.lock.withLock { self.stored } }
        set { self.lock.withLock { self.stored = newValue } }
    }
}
