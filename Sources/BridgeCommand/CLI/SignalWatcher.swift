import Bridge
import Dispatch
import Foundation

/// Calls `handler` when one of `signals` arrives (the default action is disabled while
/// watching), so a command can stop cleanly on SIGINT/SIGTERM.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        // A parent may have started us with these signals blocked; unblock them here.
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
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
