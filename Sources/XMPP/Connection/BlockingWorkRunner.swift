import NIOCore
import NIOPosix

/// Runs CPU-heavy work away from an event loop and answers on it: the PBKDF2 of a SCRAM
/// login (RFC 5802 §3) is tens of milliseconds, during which one loop would serve none of
/// the accounts and sockets it carries. Injected, so tests can hold the work back and see
/// that the loop did not run it.
public protocol BlockingWorkRunner: Sendable {
    func run<Value: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () -> Value) -> EventLoopFuture<Value>
}

extension NIOThreadPool: BlockingWorkRunner {
    public func run<Value: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () -> Value) -> EventLoopFuture<Value> {
        self.runIfActive(eventLoop: eventLoop, work)
    }
}
