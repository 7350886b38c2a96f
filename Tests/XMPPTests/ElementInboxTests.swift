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
                readingControl: { current in self.state.withLockedValue { $0.reading.append(current()) } },
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
        #expect(state.hasNews)
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

    /// Held by a wake-up, to see when the inbox lets go of it.
    final class Consumer: Sendable {}

    @Test("a wake-up registered while elements wait runs at once, and once at the end; then the inbox lets go of it (no cycle through a consumer that holds the connection)")
    func wakeUp() {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 8)
        inbox.add(Self.element(1))
        var consumer: Consumer? = Consumer()
        weak let released = consumer
        inbox.whenAdded { [consumer] in
            _ = consumer
            connection.woken()
        }
        consumer = nil
        #expect(released != nil)
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
        #expect(released == nil)
        guard case .ended = inbox.take() else {
            Issue.record("expected the end")
            return
        }
        inbox.finish()
        inbox.add(Self.element(3))
        #expect(connection.wakes == 2)
        #expect(connection.reading.isEmpty)
    }

    @Test("a consumer that gives up discards what it did not take: the end comes next")
    func discarded() {
        let inbox = Connection().inbox(highWatermark: 8)
        inbox.add(Self.element(1))
        inbox.add(Self.element(2))
        inbox.finish(discarding: true)
        inbox.add(Self.element(3))
        guard case .ended = inbox.take(), case .nothing = inbox.take() else {
            Issue.record("expected the end, then nothing")
            return
        }
    }

    @Test("a burst past the watermark stops reading, taking it resumes reading, and a drain takes every element once, in order, one run at a time")
    func drained() async {
        let connection = Connection()
        let inbox = connection.inbox(highWatermark: 16)
        let drain = Drain(executor: nil)
        let taken = NIOLockedValueBox<(ids: [Int], ended: Int, running: Int, most: Int)>(([], 0, 0, 0))
        // A burst before the drain starts: past the watermark, reading stops once.
        for n in 1...100 { inbox.add(Self.element(n)) }
        #expect(connection.reading == [false])
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
        // Another while the drain runs (or after it ended): each arrival in an empty inbox
        // wakes it, and one run at a time takes them.
        for n in 101...300 {
            inbox.add(Self.element(n))
            if n % 50 == 0 { await Task.yield() }
        }
        inbox.finish()  // a wake-up: the run under way looks again, or one starts
        await drain.idle()
        let result = taken.withLockedValue { $0 }
        #expect(result.ended == 1)
        #expect(result.ids == Array(1...300))
        #expect(result.most == 1)
        #expect(!drain.isRunning)
        // Taking the first burst resumed reading (what came after it applies the state it
        // finds, whichever thread calls first).
        #expect(connection.reading.prefix(2) == [false, true])
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
        let waits = await untilTrue { waiting.withLockedValue { $0 } && inbox.hasWaiter }
        #expect(waits)
        reader.cancel()
        #expect(await reader.value == 1)
        #expect(connection.terminated == 1)
    }

    @Test("after its end a sequence's iterator keeps returning nil, at once")
    func afterTheEnd() async {
        let inbox = Connection().inbox(highWatermark: 4)
        inbox.add(Self.element(1))
        inbox.finish()
        var iterator = XMPPElementSequence(inbox: inbox).makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        let third = await iterator.next()
        #expect(first.map { Self.ids([$0]) } == [1])
        #expect(second == nil && third == nil)
    }
}
