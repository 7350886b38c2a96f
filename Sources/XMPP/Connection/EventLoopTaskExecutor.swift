import NIOCore

/// Runs Swift tasks on one NIO event loop (SE-0417 task executor preference).
///
/// A task that prefers this executor, its child tasks, and every default actor it calls
/// (when the actor is free) run on the loop's thread instead of Swift's global pool. An
/// account's session, its transport and the relay stages they call then share the thread
/// that reads and writes the account's socket: a message crosses no thread between the
/// socket read and the relay's journal, and none between the worker and the socket write.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        // Never run inline, even on the loop itself: `enqueue` must not run the job before
        // it returns. `execute` from the loop's own thread is a queue append, not a wakeup.
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.eventLoop.execute {
            job.runSynchronously(on: executor)
        }
    }
}
