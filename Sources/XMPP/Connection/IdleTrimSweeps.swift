import NIOConcurrencyHelpers
import NIOCore

/// The ``IdleTrimSweep`` of each event loop, made at its first connection; shared by the
/// clients of many accounts (the bridge's), like ``TLSContextCache``. An idle connection
/// then holds no XML parser and no TLS buffers (issue 43).
public final class IdleTrimSweeps: Sendable {
    /// A tick's period: a quiet connection is trimmed one to two periods after its last read.
    public let period: TimeAmount
    private let sweeps = NIOLockedValueBox<[ObjectIdentifier: NIOLoopBound<IdleTrimSweep>]>([:])

    public init(period: TimeAmount = .seconds(10)) {
        self.period = period
    }

    /// The sweep of `eventLoop`. Call on that loop.
    func sweep(on eventLoop: any EventLoop) -> IdleTrimSweep {
        let key = ObjectIdentifier(eventLoop)
        let bound = self.sweeps.withLockedValue { sweeps in
            if let bound = sweeps[key] { return bound }
            let bound = NIOLoopBound(IdleTrimSweep(eventLoop: eventLoop, period: self.period), eventLoop: eventLoop)
            sweeps[key] = bound
            return bound
        }
        return bound.value
    }
}
