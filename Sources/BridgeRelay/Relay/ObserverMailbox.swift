import TransportCore

/// Hands events to one observer (presence relay, roster mirrors) in order on its own task,
/// so the relay path never waits for an observer: a slow roster change or presence
/// publication delays only that observer's later events.
package final class ObserverMailbox: Sendable {
    private let events: AsyncStream<(TransportEvent, String)>.Continuation
    private let task: Task<Void, Never>

    package init(_ observer: any TransportEventHandler) {
        let (stream, continuation) = AsyncStream.makeStream(of: (TransportEvent, String).self)
        self.events = continuation
        self.task = Task {
            for await (event, transport) in stream {
                await observer.handle(event, from: transport)
            }
        }
    }

    package func post(_ event: TransportEvent, from transport: String) {
        self.events.yield((event, transport))
    }

    deinit {
        self.events.finish()
    }
}
