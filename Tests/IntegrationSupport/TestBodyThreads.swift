import Foundation

/// Threads of the integration tests' own, on which their bodies run (``TestBodyThreadsTrait``).
///
/// A test body blocks now and then: a server's `prosodyctl`, `ejabberdctl stop`, a daemon's
/// exit, a synchronous wait for a child process. On the shared cooperative pool (as many
/// threads as cores: two on a small CI machine) a few such waits at once leave no thread for
/// anything else, and the in-process XMPP sessions the tests log in with wait for CPU they
/// could have had: a full run's first half minute then failed dozens of logins. Here a
/// blocked body holds a thread of this pool only; the sessions (unstructured tasks) keep the
/// shared pool, and the code under test is measured as it runs in production.
public final class TestBodyThreads: TaskExecutor, @unchecked Sendable {
    /// The one pool every integration suite's bodies share: more threads than test cases
    /// run at once (`scripts/test.sh` runs 6), each with a few child tasks.
    public static let shared = TestBodyThreads(count: 32)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    /// Starts `count` threads that run the jobs enqueued here, first come first run.
    public init(count: Int) {
        for index in 0..<count {
            // Named from inside: a name set before start does not reach the thread on Linux.
            Thread { [unowned self] in
                Thread.current.name = "test-body-\(index)"
                self.work()
            }.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.condition.lock()
        self.jobs.append(job)
        self.condition.signal()
        self.condition.unlock()
    }

    private func work() {
        while true {
            self.condition.lock()
            while self.next == self.jobs.count { self.condition.wait() }
            let job = self.jobs[self.next]
            self.next += 1
            if self.next == self.jobs.count {
                self.jobs.removeAll(keepingCapacity: true)
                self.next = 0
            }
            self.condition.unlock()
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
