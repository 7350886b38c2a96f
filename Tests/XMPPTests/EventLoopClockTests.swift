import NIOCore
import NIOPosix
import Testing

@testable import XMPP

/// ``EventLoopClock``: sleeps are the loop's timers; a task that prefers the loop wakes on it,
/// and cancellation ends a sleep at once, also one not yet armed.
@Suite("EventLoopClock")
struct EventLoopClockTests {
    @Test func aSleepEndsNoEarlierThanItsDeadlineAndResumesOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let clock = EventLoopClock(loop)
        let start = clock.now
        let onLoop = try await Task(executorPreference: EventLoopTaskExecutor(loop)) {
            try await clock.sleep(until: start.advanced(by: .milliseconds(20)), tolerance: nil)
            return loop.inEventLoop
        }.value
        #expect(onLoop)
        #expect(start.duration(to: clock.now) >= .milliseconds(20))
        try await group.shutdownGracefully()
    }

    @Test func cancellingASleepEndsItWithCancellationError() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clock = EventLoopClock(group.next())
        let started = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            started.continuation.yield()
            try await clock.sleep(for: .seconds(3600))
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        try await group.shutdownGracefully()
    }

    @Test func aTaskCancelledBeforeItSleepsDoesNotSleep() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clock = EventLoopClock(group.next())
        let gate = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            var iterator = gate.stream.makeAsyncIterator()
            await iterator.next()
            try await clock.sleep(for: .seconds(3600))
        }
        sleeper.cancel()
        gate.continuation.yield()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        try await group.shutdownGracefully()
    }

    @Test func aPastDeadlineReturnsAtOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clock = EventLoopClock(group.next())
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)), tolerance: nil)
        try await group.shutdownGracefully()
    }

    @Test func durationsBecomeNanosecondsSaturating() {
        #expect(EventLoopClock.nanoseconds(.milliseconds(50)) == 50_000_000)
        #expect(EventLoopClock.nanoseconds(.seconds(2) + .nanoseconds(7)) == 2_000_000_007)
        #expect(EventLoopClock.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(EventLoopClock.nanoseconds(.seconds(Int64.min)) == .min)
    }
}
