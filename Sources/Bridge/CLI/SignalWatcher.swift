import Dispatch
import Foundation

/// Calls `handler` when one of `signals` arrives (the default action is disabled while
/// watching), so a command can stop cleanly on SIGINT/SIGTERM.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        self.sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in self.sources { source.cancel() }
    }
}
