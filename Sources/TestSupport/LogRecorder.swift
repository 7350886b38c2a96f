import Foundation
import Logging

/// Keeps every log message of the loggers it makes, for tests that check what was logged.
public final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(level: Logger.Level, message: String)] = []

    public init() {}

    /// A logger whose messages (every level) this recorder keeps.
    public func logger(_ label: String) -> Logger {
        Logger(label: label) { _ in Handler(recorder: self) }
    }

    /// The messages so far, in order.
    public var messages: [String] {
        self.lock.withLock { self.entries.map(\.message) }
    }

    /// The messages so far with their levels, in order.
    public var leveled: [(level: Logger.Level, message: String)] {
        self.lock.withLock { self.entries }
    }

    fileprivate func append(_ level: Logger.Level, _ message: String) {
        self.lock.withLock { self.entries.append((level, message)) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.metadata[key] }
            set { self.metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            self.recorder.append(event.level, "\(event.message)")
        }
    }
}
