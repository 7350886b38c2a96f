import Logging
import ServiceLifecycle
import Testing
import TestSupport

@testable import Bridge

/// A shutdown that takes long names what it waits on: a warning every `patience` once it
/// began, listing the parts not returned yet, and nothing before it began or once all
/// returned.
@Suite("Stop progress")
struct StopProgressTests {
    /// A part that runs until `release` is called.
    final class Gate: Sendable {
        let (opened, opening) = AsyncStream.makeStream(of: Void.self)
        func release() { self.opening.finish() }
        func wait() async {
            for await _ in self.opened {}
        }
    }

    @Test("warns every 5 s after the shutdown began, naming each part still running (a count for several of one name)", .timeLimit(.minutes(1)))
    func warnsWhileWaiting() async throws {
        let clock = ManualClock()
        let recorder = LogRecorder()
        let progress = StopProgress(clock: clock, patience: .seconds(5), logger: recorder.logger("test"))
        let watch = Task { await progress.watch() }
        let (worker, transport, control) = (Gate(), Gate(), Gate())
        let parts = [("delivery worker a", worker), ("delivery worker a", worker), ("transport a", transport), ("control socket", control)].map { name, gate in
            Task { await progress.running(name) { await gate.wait() } }
        }
        #expect(await untilTrue { progress.waitingOn.count == 3 })
        #expect(progress.waitingOn == ["control socket", "delivery worker a ×2", "transport a"])
        // Not stopping yet: no timer, no warning however long they run.
        clock.advance(by: .seconds(60))
        #expect(clock.sleeperCount == 0)

        progress.began()
        progress.began()
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        #expect(await untilTrue { recorder.messages.count == 1 })
        #expect(recorder.leveled.first?.level == .warning)
        #expect(recorder.messages.first == "still stopping after 5 s, waiting on: control socket, delivery worker a ×2, transport a")

        worker.release()
        control.release()
        for part in parts[0..<2] { await part.value }
        await parts[3].value
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        #expect(await untilTrue { recorder.messages.count == 2 })
        #expect(recorder.messages.last == "still stopping after 10 s, waiting on: transport a")

        transport.release()
        await parts[2].value
        #expect(progress.waitingOn.isEmpty)
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        // The next timer armed means the tick with nothing running has passed: no warning.
        await clock.waitForSleepers()
        #expect(recorder.messages.count == 2)
        watch.cancel()
        await watch.value
    }

    @Test("cancelled before the shutdown began, the watch returns without a timer", .timeLimit(.minutes(1)))
    func cancelledBeforeBegan() async {
        let clock = ManualClock()
        let recorder = LogRecorder()
        let progress = StopProgress(clock: clock, logger: recorder.logger("test"))
        let watch = Task { await progress.watch() }
        watch.cancel()
        await watch.value
        #expect(clock.sleeperCount == 0)
        #expect(recorder.messages.isEmpty)
    }

    @Test("a watched service of the group starts the count when the group tells it to stop, and is listed until it returns", .timeLimit(.minutes(1)))
    func watchedServiceBegins() async throws {
        struct Slow: Service {
            let gate: Gate
            func run() async throws {
                try? await gracefulShutdown()
                await self.gate.wait()
            }
        }
        let clock = ManualClock()
        let recorder = LogRecorder()
        let progress = StopProgress(clock: clock, logger: recorder.logger("test"))
        let gate = Gate()
        let group = ServiceGroup(
            configuration: .init(services: [StopProgress.Watched(name: "paging", service: Slow(gate: gate), progress: progress)], logger: Logger(label: "test"))
        )
        let watch = Task { await progress.watch() }
        let running = Task { try await group.run() }
        #expect(await untilTrue { progress.waitingOn == ["paging"] })
        await group.triggerGracefulShutdown()
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        #expect(await untilTrue { recorder.messages == ["still stopping after 5 s, waiting on: paging"] })
        gate.release()
        try await running.value
        #expect(progress.waitingOn.isEmpty)
        watch.cancel()
        await watch.value
    }
}
