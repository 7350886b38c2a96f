/// The first-level elements a server sends after negotiation, in order, read from the
/// connection's ``ElementInbox`` by a consumer that keeps a task for it (the component's
/// one connection); with back-pressure: while nobody takes them, the connection stops
/// reading. Ends when the connection closes; ``XMPPConnection/closed()`` then says why.
/// Cancelling the task that iterates it closes the connection.
public struct XMPPElementSequence: AsyncSequence, Sendable {
    public typealias Element = XMLElement

    let inbox: ElementInbox

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: ElementInbox
        var taken: [XMLElement] = []
        var index = 0
        var ended = false

        public mutating func next() async -> XMLElement? {
            // Cancelled: what is still buffered is not handed out (the connection is closing).
            while !self.ended, !Task.isCancelled {
                if self.index < self.taken.count {
                    defer { self.index += 1 }
                    return self.taken[self.index]
                }
                switch self.inbox.take() {
                case .elements(let elements):
                    (self.taken, self.index) = (elements, 0)
                case .ended:
                    self.ended = true
                case .nothing:
                    await self.inbox.waitForNews()
                }
            }
            return nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(inbox: self.inbox)
    }
}
