import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import XMPP

/// What a connection reads, kept until taken, with back-pressure, and taken without a task
/// waiting for it (issue 43).
@Suite("Element inbox")
struct ElementInboxTests {
    static func element(_ n: Int) -> XMLElement {
        XMLElement(name: "message", namespace: "jabber:client", attributes: [XMLAttribute(name: "id", value: "\(n)")])
    }

    static func ids(_ elements: [XMLElement]) -> [Int] {
        elements.compactMap { $0[attribute: "id"].flatMap(Int.init) }
    }

    /// What the inbox asked of the connection.
    final class Connection: Sendable {
        private let state = NIOLockedValueBox<(reading: [Bool], terminated: Int, wakes: Int)>(([], 0, 0))
        var reading: [Bool] { self.state.withLockedValue { $0.reading } }
        var terminated: Int { self.state.withLockedValue { $0.terminated } }
        var wakes: Int { self.state.withLockedValue { $0.wakes } }

        func inbox(highWatermark: Int) -> ElementInbox {
            ElementInbox(
                highWatermark: highWatermark,
                readingControl: { on in self.state.withLockedValue { $0.reading.append(on) } },
                terminate: { self.state.withLockedValue { $0.terminated += 1 } }
            )
        }

        func woken() { self.state.withLockedValue { $0.wakes += 1 } }
    }

    @Test("the state: a wake-up when elements arrive in an empty inbox only; reading stops once at the watermark and resumes when they are taken; the end is said once, after the last element")
    func state() {
        var state = ElementInbox.State(highWatermark: 3)
        #expect(state.add(Self.element(1)) == .init(wake: true, stopReading: false))
        #expect(state.add(Self.element(2)) == .init(wake: false, stopReading: false))
        #expect(state.add(Self.element(3)) == .init(wake: false, stopReading: true))
        #expect(state.add(Self.element(4)) == .init(wake: false, stopReading: false))  // already stopped
        guard case (.elements(let first), true) = state.take() else {
            Issue.record("expected four elements and reading resumed")
            return
        }
        #expect(Self.ids(first) == [1, 2, 3, 4])
        guard case (.nothing, false) = state.take() else {
            Issue.record("expected nothing")
            return
        }
        #expect(state.add(Self.element(5)).wake)
        let ended = state.finish()
        let endedAgain = state.finish()
        #expect(ended && !endedAgain)
        #expect(state.add(Self.element(6)) == .init())  // after the end: dropped
        guard case (.elements(let last), false) = state.take() else {
            Issue.record("expected the last element, reading not resumed after the end")
            return
        }
        #expect(Self.ids(last) == [5])
        guard case (.ended, false) = state.take(), case (.nothing, false) = state.take() else {
            Issue.record("expected the end once, then nothing")
            return
        }
    }

    @Test("a wake-up registered while elements wait runs at once; after the end nothing wakes it")
    func wakeUp() {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 8)
        inbox.add(Self.element(1))
        inbox.whenAdded { connection.woken() }
        #expect(connection.wakes == 1)
        inbox.add(Self.element(2))  // not empty: no second wake-up
        #expect(connection.wakes == 1)
        guard case .elements(let taken) = inbox.take() else {
            Issue.record("expected elements")
            return
        }
        #expect(Self.ids(taken) == [1, 2])
        inbox.finish()
        #expect(connection.wakes == 2)
        guard case .ended = inbox.take() else {
            Issue.record("expected the end")
            return
        }
        inbox.finish()
        inbox.add(Self.element(3))
        #expect(connection.wakes == 2)
        #expect(connection.reading.isEmpty)
    }

    @Test("a burst past the watermark stops reading, taking it resumes reading, and a drain takes every element once, in order, one run at a time")
    func drained() async {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 16)
        let drain = Drain(executor: nil)
        let taken = NIOLockedValueBox<(ids: [Int], ended: Int, running: Int, most: Int)>(([], 0, 0, 0))
        inbox.whenAdded { drain.wake() }
        drain.start {
            taken.withLockedValue {
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
            defer { taken.withLockedValue { $0.running -= 1 } }
            while true {
                switch inbox.take() {
                case .elements(let elements):
                    taken.withLockedValue { $0.ids += Self.ids(elements) }
                    await Task.yield()
                case .ended:
                    taken.withLockedValue { $0.ended += 1 }
                    return
                case .nothing:
                    return
                }
            }
        }
        for n in 1...100 { inbox.add(Self.element(n)) }
        inbox.finish()  // a wake-up: the run under way looks again, or one starts
        await drain.idle()
        let result = taken.withLockedValue { $0 }
        #expect(result.ended == 1)
        #expect(result.ids == Array(1...100))
        #expect(result.most == 1)
        #expect(!drain.isRunning)
        // Reading stopped at most once per fill, and every stop was followed by a resume.
        let reading = connection.reading
        #expect(reading.first == false)
        #expect(zip(reading, reading.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test("as a sequence: every element in order, then the end")
    func sequence() async {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 4)
        let reader = Task {
            var ids: [Int] = []
            for await element in XMPPElementSequence(inbox: inbox) { ids += Self.ids([element]) }
            return ids
        }
        for n in 1...10 {
            inbox.add(Self.element(n))
            await Task.yield()
        }
        inbox.finish()
        #expect(await reader.value == Array(1...10))
        #expect(connection.terminated == 0)
    }

    @Test("a cancelled reader of the sequence closes the connection and ends")
    func cancelled() async {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 4)
        let waiting = NIOLockedValueBox(false)
        let reader = Task {
            var count = 0
            for await _ in XMPPElementSequence(inbox: inbox) {
                count += 1
                waiting.withLockedValue { $0 = true }
            }
            return count
        }
        inbox.add(Self.element(1))
        let read = await untilTrue { waiting.withLockedValue { $0 } }
        #expect(read)
        reader.cancel()
        #expect(await reader.value == 1)
        #expect(connection.terminated == 1)
    }
}
