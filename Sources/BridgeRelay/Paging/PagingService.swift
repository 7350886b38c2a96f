import Foundation
import Logging
import ServiceLifecycle

/// Paging's long-lived part (issue 24), a Service under the bridge's ServiceGroup: the
/// timer that sends repeats and escalations and releases postponed deliveries when due,
/// and the requests paging makes of other servers (Alertmanager silences, digest uploads),
/// each a child task, so a slow server never holds up the relay.
package final class PagingService<C: Clock>: Service where C.Duration == Duration, C.Instant: Sendable {
    /// One request to run off the relay path.
    package typealias Job = @Sendable () async -> Void

    package let pipeline: RelayPipeline<C>
    package let clock: C
    package let wake = PagingWake()
    private let jobs: AsyncStream<Job>
    package let submit: AsyncStream<Job>.Continuation

    package init(pipeline: RelayPipeline<C>, clock: C) {
        self.pipeline = pipeline
        self.clock = clock
        (self.jobs, self.submit) = AsyncStream.makeStream(of: Job.self)
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.timer() }
                for await job in self.jobs {
                    group.addTask { await job() }
                }
            }
        }
    }

    /// Sleeps until the pipeline's next due time or a wake, then lets it send what is due.
    private func timer() async {
        defer { self.submit.finish() }
        while !Task.isCancelled {
            let deadline = await self.pipeline.pagingDeadline()
            await withTaskGroup(of: Void.self) { group in
                if let deadline { group.addTask { try? await self.clock.sleep(until: deadline, tolerance: nil) } }
                group.addTask { await self.wake.wait() }
                await group.next()
                group.cancelAll()
            }
            guard !Task.isCancelled else { return }
            await self.pipeline.pagingTick()
        }
    }
}
