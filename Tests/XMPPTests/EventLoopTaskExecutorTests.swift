import NIOCore
import NIOPosix
import Testing

@testable import XMPP

/// Tasks that prefer an ``EventLoopTaskExecutor`` run on its loop's thread, and so do the
/// default actors they call: the relay path's "thread hops" depend on it.
@Suite("EventLoopTaskExecutor")
struct EventLoopTaskExecutorTests {
    /// A default actor (no executor of its own), as the session and the pipeline are.
    actor Recorder {
        var onLoop: [Bool] = []
        func record(_ loop: any EventLoop) { self.onLoop.append(loop.inEventLoop) }
    }

    @Test func preferredTasksAndTheDefaultActorsTheyCallRunOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let recorder = Recorder()
        let (onLoop, childOnLoop) = await withTaskExecutorPreference(executor) {
            let here = loop.inEventLoop
            await recorder.record(loop)
            // A child task inherits the preference.
            let child = await withTaskGroup(of: Bool.self) { group in
                group.addTask { loop.inEventLoop }
                return await group.next() ?? false
            }
            // After a suspension that resumes from another thread, still on the loop.
            try? await Task.sleep(for: .milliseconds(1))
            await recorder.record(loop)
            return (here && loop.inEventLoop, child)
        }
        #expect(onLoop)
        #expect(childOnLoop)
        #expect(await recorder.onLoop == [true, true])
        // Without the preference the same code runs on Swift's global pool.
        let detached = Task<Bool, Never>.detached { loop.inEventLoop }
        #expect(await detached.value == false)
        try await group.shutdownGracefully()
    }

    @Test func manyChildTasksAllRunOnTheOneLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        let results = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: (Int, Bool).self, returning: [(Int, Bool)].self) { tasks in
                for index in 0..<100 { tasks.addTask { (index, loop.inEventLoop) } }
                var seen: [(Int, Bool)] = []
                for await result in tasks { seen.append(result) }
                return seen
            }
        }
        #expect(Set(results.map(\.0)) == Set(0..<100))
        #expect(results.allSatisfy { $0.1 })
        try await group.shutdownGracefully()
    }
}
