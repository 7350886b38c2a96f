import NIOCore

/// The first-level elements a server sends after negotiation, in order, with
/// backpressure: while nobody iterates, the connection stops reading. Ends when the
/// connection closes; ``XMPPConnection/closed()`` then says why.
public struct XMPPElementSequence: AsyncSequence, Sendable {
    public typealias Element = XMLElement

    let producer: ElementStreamHandler.Producer

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: ElementStreamHandler.Producer.AsyncIterator

        public mutating func next() async -> XMLElement? {
            await self.base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: self.producer.makeAsyncIterator())
    }
}
