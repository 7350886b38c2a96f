import Testing
import XMPP

@testable import XMPP

/// The session's event stream (issue 8): in order, bounded, and in the bridge's mode it
/// makes the producer wait instead of dropping.
@Suite("SessionEventStream")
struct SessionEventStreamTests {
    static func event(_ n: Int) -> XMPPSessionEvent {
        .offline(.configuration("\(n)"))
    }

    static func number(_ event: XMPPSessionEvent?) -> Int? {
        guard case .offline(.configuration(let text))? = event else { return nil }
        return Int(text)
    }

    @Test("a waiting stream holds the producer at capacity and loses nothing")
    func waitsWhenFull() async {
        let stream = SessionEventStream(capacity: 4, waitsWhenFull: true)
        let producer = Task {
            for n in 1...100 { #expect(await stream.send(Self.event(n))) }
            stream.finish()
        }
        var received: [Int] = []
        for await event in stream {
            if let n = Self.number(event) { received.append(n) }
        }
        await producer.value
        #expect(received == Array(1...100))
    }

    @Test("the producer is blocked until the consumer takes one")
    func blocksAtCapacity() async {
        let stream = SessionEventStream(capacity: 2, waitsWhenFull: true)
        #expect(await stream.send(Self.event(1)))
        #expect(await stream.send(Self.event(2)))
        let third = Task { await stream.send(Self.event(3)) }
        var iterator = stream.makeAsyncIterator()
        #expect(Self.number(await iterator.next()) == 1)
        #expect(await third.value)
        #expect(Self.number(await iterator.next()) == 2)
        #expect(Self.number(await iterator.next()) == 3)
        stream.finish()
        #expect(await iterator.next() == nil)
    }

    @Test("a dropping stream refuses the event over capacity and says so")
    func dropsWhenFull() async {
        let stream = SessionEventStream(capacity: 2, waitsWhenFull: false)
        #expect(await stream.send(Self.event(1)))
        #expect(await stream.send(Self.event(2)))
        #expect(await !stream.send(Self.event(3)))
        var iterator = stream.makeAsyncIterator()
        #expect(Self.number(await iterator.next()) == 1)
        #expect(Self.number(await iterator.next()) == 2)
    }

    @Test("finish wakes a waiting producer and a waiting consumer")
    func finishWakesEveryone() async {
        let stream = SessionEventStream(capacity: 1, waitsWhenFull: true)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(await stream.send(Self.event(1)))
        #expect(Self.number(await consumer.value) == 1)
        #expect(await stream.send(Self.event(2)))
        let blocked = Task { await stream.send(Self.event(3)) }
        stream.finish()
        _ = await blocked.value
        var iterator = stream.makeAsyncIterator()
        #expect(Self.number(await iterator.next()) == 2)
        #expect(await iterator.next() == nil)
    }

    @Test("nextBuffered takes what is buffered, in order, never waits, and makes room for a waiting producer; mixed with iteration nothing is lost")
    func nextBuffered() async {
        let stream = SessionEventStream(capacity: 3, waitsWhenFull: true)
        #expect(stream.nextBuffered() == nil)
        for n in 1...3 { #expect(await stream.send(Self.event(n))) }
        let fourth = Task { await stream.send(Self.event(4)) }
        var iterator = stream.makeAsyncIterator()
        #expect(Self.number(await iterator.next()) == 1)
        #expect(Self.number(stream.nextBuffered()) == 2)
        #expect(Self.number(stream.nextBuffered()) == 3)
        // The producer held at capacity got room and went on.
        #expect(await fourth.value)
        #expect(Self.number(stream.nextBuffered()) == 4)
        #expect(stream.nextBuffered() == nil)
        stream.finish()
        #expect(stream.nextBuffered() == nil)
        #expect(await iterator.next() == nil)
    }
}
