/// What another task produces, taken in order by one reader (the test) across calls.
actor AsyncQueue<Element: Sendable> {
    private var iterator: AsyncStream<Element>.AsyncIterator

    init(_ stream: AsyncStream<Element>) {
        self.iterator = stream.makeAsyncIterator()
    }

    func next() async -> Element? {
        var iterator = self.iterator
        defer { self.iterator = iterator }
        return await iterator.next(isolation: self)
    }
}
