import Foundation
import NIOConcurrencyHelpers
import TransportCore

/// Writes whole lines to standard output one writer at a time, so lines from deliveries
/// and presence events never interleave; a closed reader is reported, not fatal.
public final class StandardOutput: Sendable {
    private let lock = NIOLock()

    public init() {}

    /// Writes `text`; false when standard output is closed or broken.
    @discardableResult
    public func write(_ text: String) -> Bool {
        self.lock.withLock {
            do {
                try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
                return true
            } catch {
                return false
            }
        }
    }
}
