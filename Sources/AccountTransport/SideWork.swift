/// Work beside an account's event path that nothing on it waits for (its OMEMO device
/// announced, a bundle or device list published, a session repaired): each job a child task
/// of the transport's run, so none outlives the account and none runs untracked.
final class SideWork: Sendable {
    typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init() {
        (self.jobs, self.continuation) = AsyncStream.makeStream(of: Job.self)
    }

    /// Starts `job` beside the event path; once the account has stopped, nothing.
    func add(_ job: @escaping Job) {
        self.continuation.yield(job)
    }

    /// Runs the jobs as they come, each a child task, until ``finish()``; returns when the
    /// last has ended.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await job in self.jobs {
                group.addTask { await job() }
            }
        }
    }

    /// No more jobs: ``run()`` returns once those under way have ended.
    func finish() {
        self.continuation.finish()
    }
}
