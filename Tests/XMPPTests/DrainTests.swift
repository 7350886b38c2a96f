import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import XMPP

/// An account's events taken without a task of its own while none wait (issue 43): the
/// drain over the session's event stream in its push mode.
@Suite("Drain")
struct DrainTests {
    static func event(_ n: Int) -> XMPPSessionEvent {
        .offline(.configuration("\(n)"))
    }

    static func number(_ event: XMPPSessionEvent) -> Int? {
        guard case .offline(.configuration(let text)) = event else { return nil }
        return Int(text)
    }

    /// What the drain's runs took, in order, and how many ran at once at most.
    final class Taken: Sendable {
        private let state = NIOLockedValueBox<(numbers: [Int], running: Int, most: Int, runs: Int)>(([], 0, 0, 0))
        var numbers: [Int] { self.state.withLockedValue { $0.numbers } }
        var most: Int { self.state.withLockedValue { $0.most } }
        var runs: Int { self.state.withLockedValue { $0.runs } }

        func take(from stream: SessionEventStream) async {
            self.state.withLockedValue {
                $0.running += 1
                $0.most = max($0.most, $0.running)
                $0.runs += 1
            }
            while let event = stream.nextBuffered() {
                if let n = DrainTests.number(event) { self.state.withLockedValue { $0.numbers.append(n) } }
                // Others may send meanwhile: the run goes on or looks again.
                await Task.yield()
            }
            self.state.withLockedValue { $0.running -= 1 }
        }
    }

    @Test("a bounded waiting stream taken through wake-ups: every event once, in order, one run at a time, and no run left once idle", .timeLimit(.minutes(1)))
    func takesAllInOrder() async {
        let stream = SessionEventStream(capacity: 4, waitsWhenFull: true)
        let drain = Drain(executor: nil)
        let taken = Taken()
        drain.start { await taken.take(from: stream) }
        stream.whenAdded { drain.wake() }
        for n in 1...200 { #expect(await stream.send(Self.event(n))) }
        stream.finish()
        #expect(await untilTrue { stream.isFinished && !drain.isRunning })
        await drain.idle()
        #expect(taken.numbers == Array(1...200))
        #expect(taken.most == 1)
        #expect(!drain.isRunning)
    }

    @Test("events buffered before the consumer registers are announced at once; the end is announced too")
    func announcesWhatWaits() async {
        let stream = SessionEventStream(capacity: 8, waitsWhenFull: true)
        #expect(await stream.send(Self.event(1)))
        let calls = NIOLockedValueBox(0)
        stream.whenAdded { calls.withLockedValue { $0 += 1 } }
        #expect(calls.withLockedValue { $0 } == 1)
        #expect(await stream.send(Self.event(2)))
        #expect(calls.withLockedValue { $0 } == 2)
        #expect(!stream.isFinished)
        stream.finish()
        #expect(calls.withLockedValue { $0 } == 3)
        // Finished, but two events still wait: not yet the end for the consumer.
        #expect(!stream.isFinished)
        #expect(stream.nextBuffered().flatMap(Self.number) == 1)
        #expect(stream.nextBuffered().flatMap(Self.number) == 2)
        #expect(stream.isFinished)
        stream.finish()
        #expect(calls.withLockedValue { $0 } == 3)
    }

    @Test("a wake-up before start runs nothing until start; idle() returns at once when no run is under way")
    func wakeBeforeStart() async {
        let drain = Drain(executor: nil)
        drain.wake()
        #expect(!drain.isRunning)
        await drain.idle()
        let (ran, running) = AsyncStream.makeStream(of: Void.self)
        drain.start { running.yield() }
        var iterator = ran.makeAsyncIterator()
        await iterator.next()
        await drain.idle()
        #expect(!drain.isRunning)
    }
}
